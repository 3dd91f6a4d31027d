#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| taloscope_fuzz::oneflow_json(data));
