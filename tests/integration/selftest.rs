//! A smaller `parsim selftest coverage`: 100 experiments per model with shorter runs. With 100
//! experiments the observed coverage of a correct procedure has a standard deviation of about
//! 2.2 points, so the band is widened to 87%-100% (more than 3.5 standard deviations below 95%).

use parsim::selftest::{CoveragePlan, MODELS, coverage};

#[test]
fn nominal_95_percent_intervals_cover_the_truth() {
    let plan = CoveragePlan {
        experiments: 100,
        replications: 10,
        length: 3000,
        seed: 1000,
    };
    for model in &MODELS {
        let c = coverage(model, plan, 0).expect("runs");
        assert!(
            c.fraction >= 0.87,
            "{}: coverage {} of 100 experiments",
            c.model,
            c.covered
        );
        assert!(
            c.relative_bias.abs() < 0.02,
            "{}: bias {}",
            c.model,
            c.relative_bias
        );
    }
}
