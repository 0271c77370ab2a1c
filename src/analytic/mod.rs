//! Analytic solvers: closed forms and mean value analysis, to put beside simulated figures.
//!
//! Every function takes plain numbers or slices (never the simulator's network types) and
//! returns either a typed result or an [`AnalyticError`] saying why the formula does not apply
//! (`Unstable` when `rho >= 1`, `InvalidParameter` for NaN, infinite, negative or forbidden
//! zero inputs, `NotApplicable` for systems outside the formula's assumptions,
//! `NotConverged` for iterations that give up). Nothing panics on bad numbers and no NaN is
//! returned.
//!
//! # What is here
//!
//! | function | system | formula | exact? |
//! |---|---|---|---|
//! | [`mm1`] | M/M/1 | `R = 1/(mu - lambda)` | exact |
//! | [`mg1`] | M/G/1 FCFS | Pollaczek-Khinchine `Wq = rho E[S](1 + scv)/(2(1 - rho))`; `scv = 0` is M/D/1 | exact |
//! | [`mmc`], [`erlang_c`], [`erlang_b`] | M/M/c | Erlang C via the stable Erlang B recursion | exact |
//! | [`mminf`] | M/G/inf | `R = E[S]`, `L = lambda E[S]` | exact |
//! | [`mva`] | closed single class; delays, queues (FCFS exp or PS), multi-server | Reiser-Lavenberg MVA; log-space convolution when a center has `c >= 2` servers (each refused over [`WORK_BUDGET`]) | exact (product form) |
//! | [`mva_multiclass`] | closed multiclass; delays and single-server queues | MVA over the population lattice (refused above [`MAX_LATTICE_POINTS`] or [`WORK_BUDGET`]) | exact (product form) |
//! | [`mva_residual`] | closed single class with non-exponential FCFS servers | MVA with the residual-service correction `R = D (1 + Q) + D U (scv - 1)/2` (Reiser 1979) | approximation (exact MVA when every `scv = 1`) |
//! | [`allen_cunneen`], [`kingman`] | GI/G/c, GI/G/1 | `Wq ~ Wq(M/M/c) (c_a^2 + c_s^2)/2` (Allen-Cunneen; Kingman 1961 at `c = 1`) | approximation (exact for M/M/c and M/G/1) |
//! | [`qna`] | open single class, GI/G/m and delay stations, renewal sources | Whitt's QNA: SCVs of flows through departure, splitting and merging; Kingman-KLB / Allen-Cunneen waits | approximation (Jackson's values when everything is Poisson/exponential) |
//! | [`schweitzer`] | as `mva_multiclass`, any population | Schweitzer-Bard fixed point | approximation (a few %) |
//! | [`asymptotic_bounds`], [`balanced_job_bounds`] | closed single class, queues + think time | ABA; BJB with think time (Zahorjan et al. 1982) | bounds |
//! | [`jackson`], [`solve_traffic`] | open multiclass; delay, FCFS/PS single server, M/M/c | station-by-station product form | exact (product form) |
//! | [`expected_max_exponential`], [`expected_max_uniform`] | max of `c` i.i.d. times | `H_c m`; `min + (max - min) c/(c+1)` | exact |
//! | [`expected_max_numeric`] | max of `c` i.i.d. times, any CDF | `lower + int (1 - F^c)`, adaptive Gauss-Kronrod, rel. `1e-9` | numerical |
//! | [`expected_max`], [`max_moments`] | max of independent, non-identical times (laws with multiplicities, constants, tails unbounded either way) | `E[M] = L + int_L (1 - prod F_i^m_i)`, `E[(M - L)^2] = int_L 2 (t - L)(1 - prod F_i^m_i)`, adaptive Gauss-Kronrod, rel. `1e-9` | numerical |
//! | [`clark_max`], [`ClarkMax::covariance_with`] | max of two jointly normal times; its covariance with a third | Clark (1961): `E[max] = mu_x Phi(alpha) + mu_y Phi(-alpha) + a phi(alpha)`, second moment, `Cov(Z, max) = Phi(alpha) Cov(Z, X) + Phi(-alpha) Cov(Z, Y)` | exact |
//! | [`clark_max_n`] | max of `n` jointly normal times (mean vector, covariance matrix) | Clark's pairwise iteration, each partial maximum taken as normal | approximation (exact at `n = 2`) |
//! | [`expected_max_iid_normal`] | max of `n` i.i.d. normal times | `mean + sd E[Z_(n)]` by [`max_moments`] | numerical |
//! | [`StochasticMaxPlus`] | stochastic critical path: `F_v = max_pred F_u + D_v`, durations by mean and variance | finish times as normals, maxima by Clark; operands independent, or correlated through shared ancestors by the linear canonical form of statistical timing analysis (capped terms) | approximation (sums exact; one maximum of two exact) |
//! | [`fork_join_2_server`] | open 2-server fork-join, exponential | `(12 - rho)/8 / (mu - lambda)` (Flatto-Hahn) | exact |
//! | [`nelson_tantawi`] | open `K`-server fork-join, exponential | Nelson-Tantawi scaling of the 2-server result | approximation (exact at `K = 2`) |
//! | [`mmc_sojourn`] | M/M/c FCFS sojourn law (percentiles) | wait 0 w.p. `1 - C(c,a)`, else exponential `c mu - lambda`; plus service; phase-type | exact |
//! | [`closed_queue_length`], [`fcfs_exponential_sojourn`] | sojourn at a FCFS exponential server of a closed product-form network | arrival theorem: Erlang(`j+1`) mixture over the queue-length law at `N - 1` | exact |
//! | [`mg1_response_moments`] | M/G/1 FCFS response moments (for percentiles) | Takacs' `E[T]`, `E[T^2]`; `predict` fits a gamma law to them | exact moments; the gamma law is an approximation |
//! | [`PhaseType`], [`invert_cdf`] | sums and Markov routes of phase-type laws; quantile of any CDF | uniformization, the chain run once per law; bracketing and bisection; a quantile refused before it starts when its estimated work ([`PhaseType::quantile_work`]) is over [`WORK_BUDGET`] | exact / numerical |
//! | [`MessageCost`] | a message of `m` bytes over `l` links | store-and-forward `t_s + (m t_w + t_h) l`, cut-through `t_s + l t_h + m t_w` (lecture notes) | exact on an idle network |
//! | [`fork_join_independent_max`] | open `K`-way fork-join of GI/G/1 FCFS branches, any service law | `E[max]` of `K` independent branch responses, each `S` plus a wait 0 w.p. `1 - rho` else exponential of mean `Wq/rho` | approximation (upper bound for exponential branches: Nelson-Tantawi) |
//! | [`nelson_tantawi_correlation_factor`] | the same, corrected for the branches' correlation | times `R_NT / (H_K / (mu - lambda))` at the same `rho` | approximation (exact for exponential `K = 2`) |
//! | [`fork_join_interpolation`] | open `K`-way fork-join of M/G/1 FCFS branches, any service law | `(1 - rho) E[T] = T0 + (T1 - T0) rho + (h - T1) rho^2`: exact light-traffic value `E[max S]` and slope `T1`, heavy-traffic limit `h = min(T1, H_K m (1 + c^2)/2)` (Reiman-Simon interpolation; Varma-Makowski's `h = T1`) | approximation (exact for `K = 1`, deterministic service, exponential `K = 2`) |
//! | [`varki_closed_fork_join`] | closed network with `K`-way fork-join subsystems | Varki: `R_FJ(n) = s [H_K + Q_FJ(n-1)]` | approximation (exact at `n = 1`, `K = 1`, and `K = 2` alone) |
//! | [`mg1_priority_nonpreemptive`] | M/G/1, Poisson classes at priority levels, non-preemptive (FCFS within a level) | Cobham: `W_k = W0 / ((1 - sigma_{l-1})(1 - sigma_l))`, `W0 = sum lambda_i E[S_i^2]/2` | exact |
//! | [`mg1_priority_preemptive`] | M/G/1, priority levels, preemptive resume | `R_k = E[S_k]/(1 - sigma_{l-1}) + sum_{i <= l} lambda_i E[S_i^2]/2 / ((1 - sigma_{l-1})(1 - sigma_l))` | exact |
//! | [`mmc_priority_nonpreemptive`] | M/M/c, priority levels, one exponential service for all classes | `W_k = C(c, a) / (c mu (1 - sigma_{l-1})(1 - sigma_l))` | exact |
//! | [`mmck`] | M/M/c/K (loss when `K` jobs are present) | birth-death law in logarithms; loss `P_K`, Little on accepted jobs | exact |
//! | [`mgcc`] | M/G/c/c | Erlang B `B(c, a)` (insensitive to the service law) | exact |
//! | [`mg1k`] | M/G/1/K, the service law given by `a_j = P(j arrivals in a service)` (helpers `arrivals_*`: exponential, deterministic, gamma/Erlang, hyperexponential; uniform and lognormal by quadrature) | departure-epoch chain, `p_n = pi_n/(pi_0 + rho)`, `p_K = 1 - 1/(pi_0 + rho)` (Gross-Harris 5.1.9) | exact |
//! | [`erlang_a`] | M/M/c+M (Erlang-A, exponential patience) | birth-death chain truncated at a `1e-16` tail; `P(ab) = theta E[Q]/lambda`, served waits place by place | exact |
//! | [`mxg1`] | M^X/G/1, Poisson batches ([`BatchSize`]: fixed, geometric) | `Wq = lambda_b E[X] E[S^2]/(2(1-rho)) + E[S](E[X^2] - E[X])/(2 E[X](1-rho))` | exact |
//! | [`load_dependent_station`] | open exponential station with rate `mu r(n)` | birth-death, geometric tail past the last `r` | exact |
//! | [`mva_load_dependent`] | closed single class; delays, queues, load-dependent centers ([`LdCenter`]) | Reiser-Lavenberg load-dependent MVA with marginals `p_k(j \| n)`; refused when a marginal goes below `-1e-9` | exact (product form) |
//! | [`mva_mixed`] | open and closed classes together; one-server queues (FCFS class-independent exponential, PS) and delays | the open classes' load stretches the closed ones' demands, `D / (1 - U_o)`, solved by exact multiclass MVA; the open residences follow, `D (1 + Q_c) / (1 - U_o)` | exact (product form) |
//! | [`mmc_general_patience`] | M/M/c with a patience of any law | the offered wait's density `lambda pi_(c-1) exp(lambda H(x) - c mu x)` (Baccelli-Hebuterne; Zeltyn-Mandelbaum), integrals by adaptive Gauss-Kronrod | exact |
//! | [`shadow_server`] | closed multiclass; one-server queues with priority levels (preemptive-resume), other centers as for exact MVA | Sevcik's shadow servers: a center per level, demands stretched by `1 / (1 - U_more urgent)`, iterated to a fixed point | approximation |
//! | [`mva_blocking`] | closed single class, FCFS exponential stations with finite capacities, blocking after service | Akyildiz's MVABLO (1988): MVA with full-station and blocking-time corrections | approximation (exact MVA when nothing fills) |
//! | [`ctmc::stationary`] | any continuous-time Markov chain the caller describes ([`ctmc::MarkovModel`]: an initial state, the transitions out of each state) | breadth-first enumeration of the reachable states (refused past [`ctmc::DEFAULT_STATE_LIMIT`] times the budget factor), `pi Q = 0` on the one closed class by sparse LU (`faer`), residual checked | exact (to `1e-10` in `pi Q`) |
//! | [`Ph`], [`Map`] | phase-type laws `PH(alpha, T)`; Markovian arrival processes `MAP(D0, D1)` (MMPP(2), renewal, Poisson) | `E[X^k] = k! alpha (-T)^{-k} 1`, LST `alpha (sI - T)^{-1} t`, CDF by uniformization; `lambda = theta D1 1`, inter-arrival moments `k! pi (-D0)^{-k} 1`, lag-`k` autocorrelation (Neuts 1979, 1981) | exact |
//! | [`gim1`] | GI/M/c FCFS, renewal arrivals by their Laplace-Stieltjes transform `A*`, `c <= 20` | root `sigma = A*(c mu (1 - sigma))` by bisection; boundary of the embedded chain by Takacs' equations; wait 0 w.p. `1 - P(W > 0)`, else exponential `c mu (1 - sigma)` (Gross-Harris 6.2) | exact |
//! | [`qbd`] | level-independent quasi-birth-death process with boundary levels | drift test; `G` by logarithmic reduction (Latouche-Ramaswami 1993), `R = A0 (-(A1 + A0 G))^{-1}`; boundary by linear level reduction; refused when `200 m^3` is over [`WORK_BUDGET`] | exact (to `1e-13` in `G 1`) |
//! | [`map_ph1`], [`phph1`], [`map_mc`] | MAP/PH/1, PH/PH/1, MAP/M/c FCFS | the QBD of (jobs, phases) by [`qbd`]; `L = sum n pi_n 1`, `R = L / lambda` (Little) | exact (means) |
//! | [`map_ph1_wait`] | MAP/PH/1 FCFS waiting-time law (percentiles) | absorption time of (jobs found, service phase) from the arrival-epoch law `pi_1 R^(n-1)`, levels to a `1e-15` tail; CDF and quantiles by uniformization ([`PhaseType`]) | exact (tail below `1e-15` dropped) |
//!
//! # Cost
//!
//! A solver whose work grows with its inputs (a population, a lattice, the spread of a chain's
//! rates, a quadratic sum) estimates that work before it starts and refuses with
//! [`AnalyticError::TooCostly`], the estimate and the figures behind it when it is over
//! [`WORK_BUDGET`] (2e7 operations, some 15 ms): an analysis is cheap or refuses fast. What is
//! within the budget is computed exactly as before.
//!
//! # Conventions
//!
//! - A **demand** is visits per cycle times mean service time per visit; closed-network
//!   throughputs are in cycles (of the visit-ratio reference) per time unit.
//! - Closed-network **response times** are cycle times: the sum of residence times over all
//!   centers, delays included (`X = N / R`); subtract a think-time delay's residence to get the
//!   terminal response time. [`balanced_job_bounds`] and [`asymptotic_bounds`] take the think
//!   time separately and bound the response time without it.
//! - **Utilisation** is per server; `None` for delay (infinite-server) centers.
//! - [`CenterKind::Queue`] is FCFS with exponential service; product form then needs the same
//!   mean service time for every class, which demands cannot show: check it with
//!   [`check_class_independent_service`] before calling the multiclass solvers. A network that
//!   fails the check is not product form and has no MVA or Jackson value.
//! - Results are `serde::Serialize` so a report can print them directly.
//!
//! # Example
//!
//! ```
//! use parsim::analytic::{Center, CenterKind, mm1, mva};
//!
//! let r = mm1(0.8, 1.0).unwrap().mean_response;
//! assert!((r - 5.0).abs() < 1e-12);
//!
//! let network = [
//!     Center { kind: CenterKind::Delay, demand: 2.0 },
//!     Center { kind: CenterKind::Queue, demand: 1.0 },
//!     Center { kind: CenterKind::MultiServer(4), demand: 2.0 },
//! ];
//! let solution = mva(&network, 10).unwrap();
//! let x = solution.full().throughput;
//! assert!(x < 1.0); // the single queue saturates at 1/D = 1
//! ```
#![deny(missing_docs)]

mod batch;
mod blocking;
mod bounds;
mod check;
mod clark;
mod closed;
mod convolution;
pub mod cost;
pub mod ctmc;
mod error;
mod finite;
mod forkjoin;
mod forkjoin_branches;
mod forkjoin_interpolation;
mod forkjoin_tasks;
mod gigc;
mod harmonic;
mod impatience;
mod impatience_general;
mod inverse;
mod jackson;
mod load_dependent;
pub mod loggp;
pub mod mam;
mod maxima;
mod maxplus;

/// The linear canonical forms' arithmetic (sorted `(source, coefficient)` lists), shared by
/// the max-plus network and the program's stochastic critical path.
pub(crate) mod canonical {
    pub(crate) use super::maxplus::{add_private, clark_max_form, settle, truncate};
}
mod messages;
mod mixed;
mod multiclass;
mod mva;
mod mva_multiclass;
mod mva_residual;
mod network;
mod phase_type;
mod priority;
mod qna;
mod quadrature;
mod schweitzer;
mod shadow;
mod single;
mod sojourn;
mod varki;

pub use batch::{BatchSize, mxg1};
pub use blocking::{BlockingSolution, BlockingStation, mva_blocking};
pub use bounds::{Interval, PerformanceBounds, asymptotic_bounds, balanced_job_bounds};
pub use clark::{ClarkMax, Normal, clark_max, clark_max_n, expected_max_iid_normal};
pub use closed::{Center, ClosedLevel, ClosedSolution};
pub(crate) use cost::within_budget;
pub use cost::{TRANSCENDENTAL, WORK_BUDGET};
pub use error::{AnalyticError, Result};
pub use finite::{
    FiniteMetrics, arrivals_deterministic, arrivals_exponential, arrivals_gamma,
    arrivals_hyperexponential, arrivals_lognormal, arrivals_uniform, mg1k, mgcc, mmck,
};
pub use forkjoin::{
    EXPECTED_MAX_REL_TOL, expected_max_exponential, expected_max_numeric, expected_max_uniform,
    fork_join_2_server, nelson_tantawi,
};
pub use forkjoin_branches::{
    QueueBranch, branch_response_cdf, fork_join_independent_max, nelson_tantawi_correlation_factor,
};
pub use forkjoin_interpolation::{ForkJoinInterpolation, ServiceLaw, fork_join_interpolation};
pub use forkjoin_tasks::{TaskFork, task_fork};
pub use gigc::{allen_cunneen, kingman};
pub use harmonic::harmonic;
pub use impatience::{ErlangAMetrics, erlang_a};
pub use impatience_general::{PatienceLaw, mmc_general_patience};
pub use inverse::invert_cdf;
pub use jackson::{JacksonSolution, OpenClass, jackson, solve_traffic};
pub use load_dependent::{
    LdCenter, LoadDependentMetrics, load_dependent_station, mva_load_dependent,
};
pub use mam::{
    FcfsWait, GiMcResult, Map, MapQueueResult, Ph, Qbd, QbdLevel, QbdSolution, gim1, map_mc,
    map_ph1, map_ph1_wait, phph1, qbd,
};
pub use maxima::{Law, MaxMoments, expected_max, max_moments};
pub use maxplus::{Dependence, NodeId, StochasticMaxPlus};
pub use messages::MessageCost;
pub use mixed::{MixedClass, MixedSolution, mva_mixed};
pub use multiclass::{MulticlassModel, MulticlassSolution};
pub use mva::mva;
pub use mva_multiclass::{MAX_LATTICE_POINTS, mva_multiclass};
pub use mva_residual::{GeneralCenter, mva_residual};
pub use network::{CenterKind, check_class_independent_service};
pub use phase_type::{PhaseType, QuantileWork, route_moments};
pub use priority::{
    PriorityClass, PriorityMetrics, mg1_priority_nonpreemptive, mg1_priority_preemptive,
    mmc_priority_nonpreemptive,
};
pub use qna::{QnaSolution, QnaStation, qna};
pub use schweitzer::{SchweitzerOptions, schweitzer};
pub use shadow::shadow_server;
pub use single::{StationMetrics, erlang_b, erlang_c, mg1, mm1, mmc, mminf};
pub use sojourn::{
    closed_queue_length, fcfs_exponential_sojourn, mg1_response_moments, mmc_sojourn,
};
pub use varki::{ForkJoinCenter, varki_closed_fork_join, varki_task_residence};

/// Adaptive Gauss-Kronrod quadrature to a relative accuracy with an absolute floor, for the
/// analysers' own integrals (the stochastic program evaluation's convolutions).
pub(crate) use quadrature::integrate_to as quadrature_to;
