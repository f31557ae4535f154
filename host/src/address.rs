//! The node's address when `--node-ip` is not given: the IPv4 address the kernel picks to reach
//! the default gateway, i.e. the address of the default route's interface (as upstream's
//! host-interface choice when the hostname does not resolve). [`crate::node::node_context`]
//! puts it in the `NodeContext`, so the Node's `InternalIP`, a pod's `status.hostIP` and the
//! `status.hostIP` env value are one address.
//!
//! Entry point: [`default_route_address`].

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};

const ROUTES: &str = "/proc/net/route";
/// Any port: a UDP "connect" only picks a route and a source address, it sends nothing.
const DISCARD_PORT: u16 = 9;

/// The address of the default route's interface, or `None` when there is no default route.
/// Blocking (reads procfs).
#[must_use]
pub fn default_route_address() -> Option<IpAddr> {
    let routes = std::fs::read_to_string(ROUTES).ok()?;
    let gateway = default_gateway(&routes)?;
    let socket = UdpSocket::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0))).ok()?;
    socket
        .connect(SocketAddr::from((gateway, DISCARD_PORT)))
        .ok()?;
    let address = socket.local_addr().ok()?.ip();
    (!address.is_unspecified() && !address.is_loopback()).then_some(address)
}

/// The gateway of the first default route (destination and mask zero) of a
/// `/proc/net/route` table; its addresses are hexadecimal in host (little-endian) order.
fn default_gateway(table: &str) -> Option<Ipv4Addr> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (destination, gateway, mask) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
        if *destination != "00000000" || *mask != "00000000" {
            return None;
        }
        let raw = u32::from_str_radix(gateway, 16).ok()?;
        Some(Ipv4Addr::from(raw.to_le_bytes()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_gateway_is_read_from_the_route_table() {
        let table =
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
                     sgt0\t0000580A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n\
                     eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n";
        assert_eq!(default_gateway(table), Some(Ipv4Addr::new(192, 0, 2, 1)));
        assert_eq!(default_gateway("Iface\tDestination\n"), None);
    }
}
