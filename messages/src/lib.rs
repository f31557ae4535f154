//! Every message type that crosses an actor boundary in sergeant, and the small domain types
//! they carry.
//!
//! This crate has no logic and does no I/O: it is the vocabulary the actors share. Start with
//! [`supervision`] for the messages about the supervision tree itself, and [`runtime`] for the
//! runtime port every adapter answers.

pub mod container_events;
pub mod pod_cidr;
pub mod pods;
pub mod runtime;
pub mod runtime_error;
pub mod supervision;
