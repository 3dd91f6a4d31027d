#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taloscope_fuzz::xmlrpc_reply(data));
