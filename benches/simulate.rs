//! Time to simulate: the standard lock with a thousand clients under connection loss and a few
//! expiries, and the children-watch lock's herd at two hundred. Larger runs (10,000 clients)
//! are measured by `scripts/bench-sim.sh` through the CLI's own operations-per-second line.

use criterion::{criterion_group, criterion_main, Criterion};
use zklab_model::WorldConfig;
use zklab_recipes::AnyRecipe;
use zklab_sim::{simulate, SimConfig};

fn recipes(name: &str, n: usize) -> Vec<AnyRecipe> {
    (0..n).map(|_| zklab_recipes::build(name, "/lock").unwrap()).collect()
}

fn simulation(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    let mut lossy = SimConfig::new(WorldConfig::default(), 1);
    lossy.rates.loss_before_apply = 0.005;
    lossy.rates.loss_after_apply = 0.005;
    lossy.rates.expiries = 3;
    group.bench_function("standard 1000 clients, 1% loss, 3 expiries", |b| {
        b.iter(|| simulate(&lossy, recipes("standard", 1000)).unwrap())
    });
    let quiet = SimConfig::new(WorldConfig::default(), 1);
    group.bench_function("parent-watch 200 clients", |b| {
        b.iter(|| simulate(&quiet, recipes("parent-watch", 200)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, simulation);
criterion_main!(benches);
