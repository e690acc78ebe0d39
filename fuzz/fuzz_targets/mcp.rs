#![no_main]

use gpudoctor_fuzz as fuzz;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::on_probe_stack(data, fuzz::mcp));

libfuzzer_sys::fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    fuzz::custom_mutate(
        "mcp",
        data,
        size,
        max_size,
        seed,
        libfuzzer_sys::fuzzer_mutate,
    )
});
