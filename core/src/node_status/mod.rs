//! The Node object sergeant registers and the status it reports, decided from measured facts
//! ([`facts`]: the machine's, the runtime's health): labels, capacity and allocatable,
//! addresses, nodeInfo ([`build`]), the conditions it owns ([`conditions`]) and the image list
//! ([`images`]); and whether a status differs from the API server's in more than heartbeats;
//! and the node's lease ([`lease`]). The node-status actor reads the facts, calls these and
//! writes the result.

pub mod build;
pub mod conditions;
pub mod facts;
pub mod images;
pub mod lease;
