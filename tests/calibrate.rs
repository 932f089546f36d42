//! The simulator and the checker explore the same world: every state a simulated run passes
//! through within the checker's fault budget is one the checker explored, and more seeds reach
//! more of it.

use zklab::scenario::{parse_faults, Scenario};
use zklab_model::WorldConfig;

#[test]
fn simulated_runs_stay_inside_the_checked_space_and_cover_more_with_more_seeds() {
    for faults in ["none", "loss-after-apply,expire", "lagging-read,loss-before-apply"] {
        let config = WorldConfig { faults: parse_faults(faults).unwrap(), ..WorldConfig::default() };
        let scenario = Scenario::new("standard", 2, config).unwrap();
        let calibration = zklab::calibrate::calibrate(&scenario, &[5, 100], 1_000_000, None).unwrap();
        let (few, many) = (&calibration.rows[0], &calibration.rows[1]);
        assert_eq!(many.unexplained, 0, "{faults}: a simulated state the checker never explored");
        assert!(few.reached > 0 && many.reached > few.reached, "{faults}: {few:?} then {many:?}");
        assert!(many.fraction < 1.0);
        if faults != "none" {
            assert!(many.beyond_budget > 0, "{faults}: the rates go past the checker's budget");
        }
    }
}
