//! Random inputs through every decoder: errors are fine, panics are not.

use crate::fuzz::all_decoders;
use rand::{Rng, SeedableRng};

#[test]
fn random_bytes_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x0e10_6000);
    for i in 0..50_000 {
        let len = rng.gen_range(0..if i % 10 == 0 { 512 } else { 48 });
        let mut data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        // Bias towards plausible prefixes so the decoders get past their first checks.
        if len > 0 && i % 3 == 0 {
            data[0] = rng.gen_range(0..0x20);
        }
        if len > 4 && i % 5 == 0 {
            data[..4].copy_from_slice(&(0x3FF_FFFFu32).to_le_bytes());
        }
        all_decoders(&data);
    }
}

#[test]
fn mutated_valid_packets_never_panic() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut seeds: Vec<Vec<u8>> = vec![
        b"\x03SELECT 1".to_vec(),
        b"\x11bob\0\x03xyzdb\0\x2d\0mysql_native_password\0\x05\x01a\x01b".to_vec(),
        b"\x15\x02\0\0\0\x04host\x04repl\0\xea\x0c\0\0\0\0\x01\0\0\0".to_vec(),
        b"\x1e\0\0\x03\0\0\0\x03\0\0\0bin\x04\0\0\0\0\0\0\0\x02\0\0\0xy".to_vec(),
    ];
    // A handshake response with every optional field.
    let mut hr = vec![0xFF, 0xFF, 0xFF, 0x00, 0, 0, 0, 1, 45];
    hr.extend_from_slice(&[0; 23]);
    hr.extend_from_slice(b"root\0\x14");
    hr.extend_from_slice(&[1; 20]);
    hr.extend_from_slice(b"db\0mysql_native_password\0\x04\x01a\x01b");
    seeds.push(hr);
    for _ in 0..20_000 {
        let mut d = seeds[rng.gen_range(0..seeds.len())].clone();
        for _ in 0..rng.gen_range(1..4) {
            match rng.gen_range(0..3) {
                0 if !d.is_empty() => {
                    let i = rng.gen_range(0..d.len());
                    d[i] = rng.gen();
                }
                1 if !d.is_empty() => {
                    let n = rng.gen_range(0..d.len());
                    d.truncate(n);
                }
                _ => d.push(rng.gen()),
            }
        }
        all_decoders(&d);
    }
}
