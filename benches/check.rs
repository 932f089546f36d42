//! Time to check the standard lock completely, for sizes that finish in well under a second.
//! The larger sizes (N=2..5, with and without faults) are measured by `scripts/bench.sh`
//! through the CLI's own JSON report, which also gives states per second and peak memory.

use criterion::{criterion_group, criterion_main, Criterion};
use zklab::check::{self, Options};
use zklab::scenario::{parse_faults, Scenario};
use zklab_model::WorldConfig;

fn scenario(clients: usize, faults: &str) -> Scenario {
    let config = WorldConfig { faults: parse_faults(faults).unwrap(), ..WorldConfig::default() };
    Scenario::new("standard", clients, config).unwrap()
}

fn standard_lock(c: &mut Criterion) {
    let mut group = c.benchmark_group("check standard");
    group.sample_size(10);
    for (clients, faults) in [(2, "none"), (2, "loss-after-apply"), (2, "expire"), (3, "none"), (3, "loss-after-apply")]
    {
        let s = scenario(clients, faults);
        for symmetry in [false, true] {
            let options = Options { threads: 2, symmetry, ..Options::default() };
            let mode = if symmetry { "sym" } else { "full" };
            group.bench_function(format!("n{clients} {faults} {mode}"), |b| b.iter(|| check::run(&s, &options)));
        }
    }
    group.finish();
}

criterion_group!(benches, standard_lock);
criterion_main!(benches);
