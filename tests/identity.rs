//! States and parts are told apart by keyed 128-bit digests (`zklab_model::cache::memo::digest`), so
//! that no input can be built to collide. Unkeyed XXH3, the digest before, has collisions
//! anyone can build: on an input over 240 bytes a lane value `v` adds
//! `lo32(v ^ s) * hi32(v ^ s)` to an accumulator and `v` itself to its neighbour, for a public
//! secret word `s`; with `hi32(v) == hi32(s)` the product is 0, so moving an amount from one
//! such lane to another in the same block leaves the digest as it was.

use std::hash::{Hash, Hasher};
use std::process::Command;
use zklab_model::cache::memo::digest;

/// A part whose hash is its bytes, as a recipe's state carrying data writes them.
struct Blob(Vec<u8>);

impl Hash for Blob {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write(&self.0);
    }
}

/// The first two words of XXH3's public default secret (the specification's `kSecret`), which
/// stripes 0 and 1 of a long input mix lane 0 with.
const SECRET_WORD_0: u64 = 0xbe4b_a423_396c_feb8;
const SECRET_WORD_1: u64 = 0x1cad_21f7_2c81_017c;

/// 1024 bytes whose lane 0 of stripe 0 holds `a` and lane 0 of stripe 1 holds `b` (each below
/// 2^32) under the secret words' high halves: both products vanish, and only `a + b` is left.
fn colliding(a: u64, b: u64) -> Vec<u8> {
    let mut bytes = vec![7u8; 1024];
    bytes[0..8].copy_from_slice(&((SECRET_WORD_0 & !0xffff_ffff) | a).to_le_bytes());
    bytes[64..72].copy_from_slice(&((SECRET_WORD_1 & !0xffff_ffff) | b).to_le_bytes());
    bytes
}

#[test]
fn two_parts_that_collide_under_unkeyed_xxh3_stay_apart() {
    let (one, other) = (colliding(0x1000, 0x2000), colliding(0x1010, 0x1ff0));
    assert_ne!(one, other);
    assert_eq!(
        xxhash_rust::xxh3::xxh3_128(&one),
        xxhash_rust::xxh3::xxh3_128(&other),
        "the unkeyed digest merges them"
    );
    assert_ne!(digest(&Blob(one)), digest(&Blob(other)), "the keyed digest tells them apart");
    // Any amount moved between the two lanes collides unkeyed: a family, not one accident.
    for moved in [1, 0x10, 0x800] {
        let moved = colliding(0x1000 + moved, 0x2000 - moved);
        assert_eq!(xxhash_rust::xxh3::xxh3_128(&moved), xxhash_rust::xxh3::xxh3_128(&colliding(0x1000, 0x2000)));
        assert_ne!(digest(&Blob(moved)), digest(&Blob(colliding(0x1000, 0x2000))));
    }
}

/// The report of `zklab check` with `args`, without what depends on the machine's timing.
fn report(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_zklab")).args(["check", "--json", "-q"]).args(args).output().unwrap();
    let mut report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    for timing in ["elapsed_ms", "peak_rss_kib", "bytes_per_state"] {
        report.as_object_mut().unwrap().remove(timing);
    }
    report
}

#[test]
fn each_process_draws_its_own_key_and_reports_the_same_counts_and_traces() {
    // Two processes, two keys: nothing reported depends on a digest's value.
    let dir = std::env::temp_dir().join(format!("zklab-identity-{}", std::process::id()));
    let dirs = [dir.join("a"), dir.join("b")];
    let runs: Vec<_> = dirs
        .iter()
        .map(|d| {
            let d = d.to_str().unwrap();
            let args = ["--recipe", "blind-retry", "--clients", "3", "--faults", "loss-after-apply", "--trace-dir", d];
            report(&args)
        })
        .collect();
    let strip = |mut r: serde_json::Value| {
        for p in r["properties"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("trace_file");
        }
        r
    };
    assert!(runs[0]["unique_states"].as_u64().unwrap() > 1_000);
    assert_eq!(strip(runs[0].clone()), strip(runs[1].clone()));
    let traces = |d: &std::path::Path| {
        let mut files: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files.iter().map(|f| std::fs::read(f).unwrap()).collect::<Vec<_>>()
    };
    let (a, b) = (traces(&dirs[0]), traces(&dirs[1]));
    assert!(!a.is_empty(), "a broken recipe writes its counterexamples");
    assert_eq!(a, b, "byte-identical traces");
    let _ = std::fs::remove_dir_all(dir);
}
