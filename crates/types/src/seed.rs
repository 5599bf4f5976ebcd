//! Seeds for tests that make random choices: each run prints its seed, and the same seed
//! replays the same choices.

/// The seed of test `test`: `ONELOG_TEST_SEED` if set, else one from the clock. Printed
/// (on stderr, which a failing test shows) with how to replay it.
pub fn test_seed(test: &str) -> u64 {
    let seed = std::env::var("ONELOG_TEST_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    eprintln!("{test}: random seed {seed} (ONELOG_TEST_SEED={seed} replays it)");
    seed
}
