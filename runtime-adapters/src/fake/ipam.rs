//! Fake pod IPs: one address per sandbox from 10.244.0.0/16, returned to the pool when the
//! sandbox is removed and handed out again lowest first.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

/// The first two octets of the pod network.
const NETWORK: [u8; 2] = [10, 244];
/// The lowest host offset handed out (`.0.1` is left to the gateway).
const FIRST_HOST: u16 = 2;
/// The highest host offset handed out (`.255.255` is the broadcast address).
const LAST_HOST: u16 = u16::MAX - 1;

/// The address pool.
#[derive(Debug)]
pub(super) struct IpPool {
    /// The lowest offset never handed out.
    fresh: u32,
    /// Offsets handed out and returned since.
    released: BTreeSet<u16>,
}

impl Default for IpPool {
    fn default() -> Self {
        Self {
            fresh: u32::from(FIRST_HOST),
            released: BTreeSet::new(),
        }
    }
}

impl IpPool {
    /// A free address, or `None` when all 65 533 are in use.
    pub(super) fn allocate(&mut self) -> Option<Ipv4Addr> {
        let offset = if let Some(offset) = self.released.pop_first() {
            offset
        } else {
            let offset = u16::try_from(self.fresh)
                .ok()
                .filter(|offset| *offset <= LAST_HOST)?;
            self.fresh += 1;
            offset
        };
        let [high, low] = offset.to_be_bytes();
        Some(Ipv4Addr::new(NETWORK[0], NETWORK[1], high, low))
    }

    /// Returns `ip` to the pool; addresses this pool never handed out are ignored.
    pub(super) fn release(&mut self, ip: Ipv4Addr) {
        let [a, b, high, low] = ip.octets();
        let offset = u16::from_be_bytes([high, low]);
        if [a, b] == NETWORK && offset >= FIRST_HOST && u32::from(offset) < self.fresh {
            self.released.insert(offset);
        }
    }
}
