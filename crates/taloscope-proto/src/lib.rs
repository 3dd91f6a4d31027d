//! Generated types for taloscope's subset of the Talos and COSI APIs (the top-level proto/):
//! messages always, client stubs with the `client` feature, server traits with `server`.
#![allow(clippy::all, missing_docs)]

pub mod google {
    pub mod rpc {
        tonic::include_proto!("google.rpc");
    }
}

pub mod common {
    tonic::include_proto!("common");
}

pub mod machine {
    tonic::include_proto!("machine");
}

pub mod cluster {
    tonic::include_proto!("cluster");
}

pub mod cosi {
    pub mod resource {
        tonic::include_proto!("cosi.resource");
    }
}
