//! Fake pod IPs: one address per sandbox from the pod network, returned to the pool when the
//! sandbox is removed and handed out again lowest first.
//!
//! The pod network is 10.244.0.0/16 until the kubelet hands over the node's pod CIDR (CRI
//! `UpdateRuntimeConfig`), as a real runtime's CNI plugin would take it; addresses already
//! handed out stay with their sandboxes when it changes.

use std::collections::BTreeSet;
use std::fmt;
use std::net::Ipv4Addr;

/// The pod network before the kubelet names one.
const DEFAULT_NETWORK: Ipv4Network = Ipv4Network {
    base: u32::from_be_bytes([10, 244, 0, 0]),
    prefix: 16,
};
/// The lowest host offset handed out (`.1` is left to the gateway).
const FIRST_HOST: u32 = 2;

/// Why the pod CIDR the kubelet hands over (CRI `UpdateRuntimeConfig`) gives the fake runtime
/// no network; the call is refused `InvalidArgument` with this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum PodCidrError {
    /// The list holds no IPv4 range (the fake runtime hands out IPv4 addresses only).
    #[error("pod CIDR {0:?} has no IPv4 range (the fake runtime hands out IPv4 addresses only)")]
    NoIpv4(String),
    /// The first IPv4 range has no `/N`.
    #[error("pod CIDR {0:?} has no prefix length")]
    NoPrefix(String),
    /// The first IPv4 range's address does not parse.
    #[error("pod CIDR {cidr:?}: {address:?} is not an IPv4 address")]
    NotAnAddress {
        /// The range.
        cidr: String,
        /// Its address part.
        address: String,
    },
    /// The prefix length is not 0 to 32.
    #[error("pod CIDR {0:?}: the prefix length must be 0 to 32")]
    PrefixLength(String),
}

/// An IPv4 network: its first address and prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ipv4Network {
    base: u32,
    prefix: u8,
}

impl Ipv4Network {
    /// The first IPv4 range of a pod CIDR list (`10.244.7.0/24,fd00::/64`), as a runtime with
    /// an IPv4-only network takes it.
    ///
    /// # Errors
    /// [`PodCidrError`]: why `cidrs` holds no well-formed IPv4 range.
    pub(super) fn first_of(cidrs: &str) -> Result<Self, PodCidrError> {
        let mut ipv4 = cidrs.split(',').map(str::trim).filter(|c| !c.contains(':'));
        let cidr = ipv4
            .next()
            .ok_or_else(|| PodCidrError::NoIpv4(cidrs.to_owned()))?;
        let (address, prefix) = cidr
            .split_once('/')
            .ok_or_else(|| PodCidrError::NoPrefix(cidr.to_owned()))?;
        let address: Ipv4Addr = address.parse().map_err(|_| PodCidrError::NotAnAddress {
            cidr: cidr.to_owned(),
            address: address.to_owned(),
        })?;
        let prefix: u8 = prefix
            .parse()
            .ok()
            .filter(|p| *p <= 32)
            .ok_or_else(|| PodCidrError::PrefixLength(cidr.to_owned()))?;
        let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        Ok(Self {
            base: u32::from(address) & mask,
            prefix,
        })
    }

    /// How many addresses the network holds (2^(32 - prefix)).
    fn size(self) -> u64 {
        1u64 << (32 - u32::from(self.prefix))
    }
}

impl fmt::Display for Ipv4Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.base), self.prefix)
    }
}

/// The address pool.
#[derive(Debug)]
pub(super) struct IpPool {
    /// Where new addresses come from.
    network: Ipv4Network,
    /// Every address handed out and not yet returned, whatever network it came from.
    in_use: BTreeSet<u32>,
}

impl Default for IpPool {
    fn default() -> Self {
        Self {
            network: DEFAULT_NETWORK,
            in_use: BTreeSet::new(),
        }
    }
}

impl IpPool {
    /// The network new addresses come from.
    pub(super) fn network(&self) -> Ipv4Network {
        self.network
    }

    /// Takes new addresses from `network` from now on.
    pub(super) fn set_network(&mut self, network: Ipv4Network) {
        self.network = network;
    }

    /// The lowest free host address of the network (neither the gateway `.1` nor the last,
    /// broadcast address), or `None` when all are in use.
    pub(super) fn allocate(&mut self) -> Option<Ipv4Addr> {
        let base = u64::from(self.network.base);
        let first = base + u64::from(FIRST_HOST);
        let last = (base + self.network.size()).checked_sub(2)?;
        let mut candidate = first;
        for used in self.in_use.range(u32::try_from(first).ok()?..) {
            if u64::from(*used) != candidate {
                break;
            }
            candidate += 1;
        }
        let address = u32::try_from(candidate)
            .ok()
            .filter(|_| candidate <= last)?;
        self.in_use.insert(address);
        Some(Ipv4Addr::from(address))
    }

    /// Returns `ip` to the pool; addresses this pool never handed out are ignored.
    pub(super) fn release(&mut self, ip: Ipv4Addr) {
        self.in_use.remove(&u32::from(ip));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(cidr: &str) -> IpPool {
        let mut pool = IpPool::default();
        pool.set_network(Ipv4Network::first_of(cidr).expect("a valid CIDR"));
        pool
    }

    #[test]
    fn hands_out_the_default_network_lowest_first_and_reuses_released_addresses() {
        let mut pool = IpPool::default();
        let a = pool.allocate().expect("an address");
        let b = pool.allocate().expect("an address");
        assert_eq!(
            (a, b),
            (Ipv4Addr::new(10, 244, 0, 2), Ipv4Addr::new(10, 244, 0, 3))
        );
        pool.release(a);
        assert_eq!(pool.allocate(), Some(a));
        assert_eq!(pool.allocate(), Some(Ipv4Addr::new(10, 244, 0, 4)));
    }

    #[test]
    fn takes_addresses_from_the_pod_cidr_and_stops_before_the_broadcast_address() {
        let mut pool = pool("10.244.7.0/29");
        let got: Vec<_> = std::iter::from_fn(|| pool.allocate()).collect();
        let want: Vec<_> = (2..=6).map(|h| Ipv4Addr::new(10, 244, 7, h)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_new_network_never_hands_out_an_address_still_in_use() {
        let mut pool = pool("10.244.7.0/24");
        let kept = pool.allocate().expect("an address");
        pool.set_network(Ipv4Network::first_of("10.244.0.0/16").expect("valid"));
        pool.set_network(Ipv4Network::first_of("10.244.7.0/24").expect("valid"));
        assert_eq!(pool.allocate(), Some(Ipv4Addr::new(10, 244, 7, 3)));
        pool.release(kept);
        assert_eq!(pool.allocate(), Some(kept));
    }

    #[test]
    fn reads_the_first_ipv4_range_and_masks_host_bits() {
        let network = Ipv4Network::first_of("fd00::/64, 10.244.7.9/24").expect("valid");
        assert_eq!(network.to_string(), "10.244.7.0/24");
    }

    #[test]
    fn refuses_malformed_or_ipv6_only_cidrs() {
        for (cidr, fault) in [
            ("fd00::/64", "no IPv4 range"),
            ("10.244.7.0", "no prefix length"),
            ("10.244.7/24", "not an IPv4 address"),
            ("10.244.7.0/33", "prefix length"),
        ] {
            let err = Ipv4Network::first_of(cidr).expect_err(cidr);
            assert!(err.to_string().contains(fault), "{cidr}: {err}");
        }
        assert_eq!(
            Ipv4Network::first_of("fd00::/64"),
            Err(PodCidrError::NoIpv4("fd00::/64".into()))
        );
    }

    #[test]
    fn a_network_too_small_for_a_host_hands_out_nothing() {
        assert_eq!(pool("10.244.7.0/31").allocate(), None);
        assert_eq!(pool("10.244.7.0/32").allocate(), None);
    }
}
