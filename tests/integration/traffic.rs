//! Network traffic (issue 40): messages no operation receives (`to = "random"`,
//! `received = false`), their offered load and accepted throughput, and the fluid model that
//! predicts the throughput beyond saturation.

use parsim::scenario::Scenario;
use parsim::study::analyze_scenario;

use super::util::{self, call, prediction, scenario, simulated_means, temp_scenario};

/// `times` trips of (`compute`, an `isend` of 4 KiB to `to`, not received) on 72 ranks of a
/// dragonfly of 9 groups of 4 routers with 2 hosts each, routed by `routing`.
fn dragonfly(routing: &str, times: u32, compute: &str, to: &str) -> Scenario {
    scenario(&dragonfly_text(routing, times, compute, to))
}

/// The text of [`dragonfly`].
fn dragonfly_text(routing: &str, times: u32, compute: &str, to: &str) -> String {
    let body = format!(
        r#"[{{ kind = "compute", time = {compute} }}, {{ kind = "isend", to = "{to}", bytes = 4096, received = false }}]"#
    );
    util::dragonfly_text(routing, times, &body)
}

/// Two ranks offer each other 4 KiB every 4 us (2 us of compute and the 2 us startup) over
/// their own links of 1 GB/s: 1.024 of a link's bandwidth offered, to the bit; the links pass
/// at most one, and the run delivers in the window what they send back to back, to the bit.
#[test]
fn a_link_offered_more_than_its_bandwidth_accepts_its_bandwidth() {
    let sc = scenario(
        r#"name = "two"
[program]
ranks = 2
[[program.op]]
kind = "repeat"
times = 2000
body = [
  { kind = "compute", time = 2e-6 },
  { kind = "isend", to = "1 - rank", bytes = 4096, received = false },
]
[topology]
kind = "full"
bandwidth = 1e9
latency = 1e-7
startup = 2e-6
"#,
    );
    let [offered, accepted, count] = simulated_means(
        &sc,
        2,
        1,
        &["messages.offered", "messages.accepted", "messages.count"],
    )[..] else {
        unreachable!()
    };
    assert!((offered - 1.024).abs() < 1e-9, "offered {offered}");
    // each link sends back to back from the first injection at 4 us, a message every
    // 4.096 us, each delivered 0.1 us after its transmission ends: by the window's end at 8 ms
    // (the hosts' finish) floor((8 ms - 4 us - 0.1 us) / 4.096 us) = 1952 of them each way
    let delivered = ((8e-3_f64 - 4e-6 - 1e-7) / 4.096e-6).floor();
    assert_eq!(delivered, 1952.0);
    let expected = delivered * 4096.0 / (1e9 * 8e-3);
    assert!(
        (accepted - expected).abs() < 1e-9,
        "accepted {accepted}, expected {expected}"
    );
    assert_eq!(count, 4000.0);
    let a = analyze_scenario(&sc);
    let fluid = prediction(&a, "messages.accepted", "fluid model");
    assert!((fluid.value - 1.0).abs() < 1e-9, "fluid {}", fluid.value);
}

/// Random destinations are uniform over the other ranks: on a full network of 4 ranks, each
/// of a rank's 3 links carries a third of its 3,000 messages (within 5 standard deviations of
/// the binomial count), and the same seed gives the same figures on 1 and 3 threads.
#[test]
fn random_destinations_are_uniform_over_the_other_ranks_and_reproducible() {
    let sc = scenario(
        r#"name = "uniform"
[program]
ranks = 4
report_each = true
[[program.op]]
kind = "repeat"
times = 3000
body = [
  { kind = "compute", time = { dist = "exp", mean = 1e-5 } },
  { kind = "isend", to = "random", bytes = 64 },
]
[topology]
kind = "full"
bandwidth = 1e9
"#,
    );
    let links = [
        "link.0-1.messages",
        "link.0-2.messages",
        "link.0-3.messages",
    ];
    let one = simulated_means(&sc, 2, 1, &links);
    let sd = (3000.0_f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt();
    for (name, n) in links.iter().zip(&one) {
        assert!((n - 1000.0).abs() < 5.0 * sd, "{name}: {n}");
    }
    assert_ne!(one[0], one[1], "the draws differ between destinations");
    assert_eq!(one, simulated_means(&sc, 2, 3, &links));
}

/// The group shift as traffic offered at half a host's injection bandwidth: minimal routes
/// hold each group to its one global link to the next (the channel-load saturation 1 / (a p) =
/// 0.125: [`route_loads_give_the_saturation_of_the_traffic`]), and beyond it the fluid model's accepted throughput is the run's to 1%: 0.1181, less
/// than 0.125 because the local link into the global link's router also carries what the
/// previous group's global link delivers there, at 1.25 times its bandwidth. Valiant routes
/// accept 0.41, the fluid model's figure to 1% as well.
#[test]
fn the_fluid_model_follows_the_group_shift_beyond_saturation() {
    for (routing, compute) in [
        ("minimal", "6.2e-6"),
        ("valiant", r#"{ dist = "exp", mean = 6.2e-6 }"#),
    ] {
        let sc = dragonfly(routing, 2000, compute, "(rank + 8) % P");
        let [offered, accepted] =
            simulated_means(&sc, 2, 1, &["messages.offered", "messages.accepted"])[..]
        else {
            unreachable!()
        };
        let a = analyze_scenario(&sc);
        let fluid = prediction(&a, "messages.accepted", "fluid model");
        assert!(
            (fluid.value / accepted - 1.0).abs() < 0.01,
            "{routing}: fluid {} against {accepted} simulated",
            fluid.value
        );
        assert!(
            (offered - 0.4995).abs() < 0.005,
            "{routing}: offered {offered}"
        );
    }
}

/// `route --loads` of the group shift as traffic: the global link between consecutive groups
/// carries a whole group's bytes, so the hosts saturate it at 1 / (a p) = 12.5% of their
/// injection bandwidth under minimal routes; under Valiant routes a local link of the
/// intermediate groups is the busiest, at 43.7%.
#[test]
fn route_loads_give_the_saturation_of_the_traffic() {
    // (7/16 = 43.75% under Valiant routes, printed to one decimal)
    for (routing, busiest, share) in [("minimal", "g0r0>g1", 12.5), ("valiant", "g0r0-r1", 43.75)] {
        let file = temp_scenario(
            &format!("traffic_loads_{routing}"),
            &dragonfly_text(routing, 100, "6.2e-6", "(rank + 8) % P"),
        );
        let (code, out, err) = call(&["route", file.to_str().unwrap(), "--loads"]);
        assert_eq!(code, Some(0), "{err}");
        let last = out.lines().last().unwrap_or_default();
        let printed: f64 = last
            .split("saturate it at ")
            .nth(1)
            .and_then(|t| t.split('%').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN);
        assert!(
            last.starts_with(&format!("the busiest link, {busiest},"))
                && (printed - share).abs() <= 0.05 + 1e-9,
            "{routing}: {last}"
        );
    }
}
