//! The vocabulary of the node's stats: the Summary API's types ([`summary`]), which the host
//! reads into and the HTTP server answers with, and the runtime listings they start from
//! ([`listing`]).

pub mod listing;
pub mod summary;
