//! parsim's integration tests: one test binary, one module per topic.

/// Which analytic methods apply to a network, and which refuse.
mod analysis;
/// Analysis that is cheap or refuses fast: work estimated before a method starts.
mod analysis_cost;
/// Wq, visits, residence and N/X - Z against closed forms and MVA.
mod analyst_metrics;
/// The corpus of malformed scenarios in tests/bad/: exit 2, field paths, no panic.
mod bad_input;
/// Blocking after service: the exact chain of a cycle, Akyildiz's published values, deadlock.
mod blocking;
/// Rounds of messages on a shared bus: fair rounds through `repeat` exact to the tick, FCFS
/// ties and random compute labelled.
mod bus_rounds;
/// The command line: exit codes and error messages for bad input.
mod cli;
/// Closed fork-join networks by composite centres: Varki's per-queue values, forced flow, the
/// SPMD networks, the degenerate one-branch fork.
mod closed_forkjoin;
/// Same seed, same bytes, on 1 thread or 4.
mod determinism;
/// Expected maxima where ranks meet: exact barriers and collectives, bounds and the stochastic
/// critical path for neighbour exchanges, extended over long loops from their first iterations.
mod expected_maxima;
/// `parsim fit-comm`: coefficients recovered from simulated measurements, profiles in place of a
/// topology.
mod fit_comm;
/// `parsim fit --model spmd`: parameters recovered from simulated speedup surfaces.
mod fit_spmd;
/// `parsim fit-trace`: recovery of a synthetic MMPP(2), time stamps, bad measurements.
mod fit_trace;
/// Structured fuzzing of parse, check, analysis and short runs.
mod fuzz;
/// GOAL schedules on LogGP endpoints against LogGOPSim's own times.
mod goal;
/// `parsim run x.goal`, `parsim goal`, `irecv` and `wait`, and bad GOAL input.
mod goal_programs;
/// The collectives of GPU training on nodes with links of their own.
mod gpu_collectives;
/// The user guide's scenarios and commands work as the guide shows them.
mod guide;
/// Hostile inputs of issue 44: GOAL files and flags, LogGP parameters, timelines,
/// outputs over inputs, devices and links, identities of runs, and the older surfaces' last
/// findings.
mod hardening;
/// Hostile inputs (issue 23): script injection, outputs over inputs, pipes and devices, counts
/// that multiply work, extreme numbers.
mod hostile;
/// The layering of src/: imports point down, no circle, engines and program IR know no model.
mod layers;
/// The LogGP closed forms of every collective algorithm against the executor, P = 2 to 1,024.
mod loggp_forms;
/// LogGP endpoints with links: free links give LogGP's makespan, a shared link queues by the
/// delay computed by hand.
mod loggp_links;
/// Dragonflies and HyperX: what their routings do to a pattern, against the routes by hand.
mod machines;
/// Messages that say what to do (issue 21): hints that fit, fixes for closed classes, defaults
/// explained, warnings on heavy tails; a bare number for a distribution is a fixed time.
mod messages;
/// Every metric a scenario reports is described (unit and meaning).
mod metric_catalogue;
/// Mixed networks: exact mixed MVA against the simulation, and its label off product form.
mod mixed;
/// Laws of random valid networks: Little, conservation, capacity, thread identity.
mod network_properties;
/// Open fork-joins with non-exponential branches: the light-traffic interpolation.
mod open_forkjoin;
/// Percentile predictions of networks against values computed by hand, and their labels.
mod percentile_hand_values;
/// Exact percentile predictions (M/M/1, M/M/c) against simulation.
mod percentiles;
/// Every picture parsim writes, rendered: not blank, text inside, short ticks and names.
mod pictures;
/// Kuntraruk's parallel pipeline against eq. 6 and the report's arithmetic.
mod pipeline;
/// Every bundled file's metrics, percentiles included, have a prediction.
mod prediction_coverage;
/// The contention-free mean-value evaluation of rank programs against hand values and runs.
mod program_predictions;
/// A long loop's mean-value walk extended from its first iterations, against the walk of all.
mod program_walk_extension;
/// Rank programs: exact contention-free times, collectives, deadlocks.
mod programs;
/// Properties over generated inputs: calendar order, tally merge, distribution moments.
mod properties;
/// A replayed trace: a stretch per replication, warnings, correlation.
mod replay;
/// What `parsim run` writes: identity fields, thread-independent run id, per-replication values.
mod result_files;
/// Class switching, round robin, join the shortest queue, trace-driven service.
mod routing;
/// `parsim run --shard` and `parsim merge` of its files.
mod run_shards;
/// The sampled critical path: exact barriers, simulations of two laws, any thread count, cost.
mod sampled_critical_path;
/// Every bundled scenario parses and runs.
mod scenarios;
/// `parsim schema`: the bundled scenarios are valid, the structural errors of tests/bad rejected.
mod schema;
/// parsim from the shell: `-` for standard input, `--set` on analyze and validate, validate's
/// `--replications` and `--length`.
mod scripting;
/// Coverage of nominal 95% intervals over many independent experiments.
mod selftest;
/// `[spmd]`: the Cremonesi-Gennaro networks against their exact methods.
mod spmd;
/// `[spmd]` with `network = ...`: the program it builds and its idle-network times.
mod spmd_network;
/// Multi-phase `[spmd]` programs: per-phase and total times, bad phase tables.
mod spmd_phases;
/// Stations with features (priorities, capacities, impatience, batches, load-dependent speed)
/// against their exact results.
mod stations;
/// Simulation against closed-form results, with fixed seeds and stated tolerances.
mod statistics;
/// `parsim sweep` and `run --set`: keys, values, grids, the seed rule.
mod sweep;
/// Sweeps that finish: unstable points marked, analytic-only sweeps, NaN written alike by a
/// single run and a merge.
mod sweep_finish;
/// `run --timeline`: the Trace Event Format, spans that tile each rank's run and add up to its
/// figures, the same bytes on any thread count, refusals.
mod timeline;
/// A schedule converted from a real MPI run (NPB CG, liballprof, Schedgen) against
/// LogGOPSim's times with the parameters fitted to this machine's ping-pong.
mod traces;
/// Network traffic: messages no operation receives, offered load, accepted throughput, the
/// fluid model.
mod traffic;
/// `[training]`: a data-parallel step's overlap and its closed form against the run.
mod training;
/// Shared helpers.
mod util;
/// `parsim validate`: exit codes, reports, reruns.
mod validate_cli;
/// `parsim validate --shard` and `parsim merge` of its files.
mod validate_shards;
