//! Provisioning Talos nodes as VMs: plans, machine-config checks, the runner
//! that creates VMs and follows each until its node has joined, and the
//! journal of the VMs it started.
