//! The generated Talos and COSI protocol types (crate taloscope-proto, client stubs only),
//! re-exported so `crate::proto::machine::...` reads as before.
pub use taloscope_proto::*;
