//! The vocabulary of analysis, shared by every analyser: a [`Prediction`] (a value for a
//! simulated metric, labelled exact or with the assumption that breaks), a [`Bound`], a
//! [`Refusal`] (a method that does not apply, and why), and the [`Analysis`] that collects
//! them. The analysers sit below it: [`network`] for queueing networks, [`program`] for rank
//! programs; a high-level model's own equations live with the model (`crate::models`), and
//! [`crate::study`] puts them together for a scenario.
//!
//! **Labels.** A method's label is its name when its result is exact under the model's
//! assumptions. Otherwise the label says what breaks, one way for every analyser:
//! [`labelled`] appends the assumption that fails to a network method
//! (`exact MVA; FCFS station "disk" has SCV 0, not exponential`), [`approximation`] the
//! assumptions a program evaluation leaves out (`contention-free; approximation: Jensen`).

pub mod measured;
pub mod network;
pub mod program;
pub mod schedule;

use serde::Serialize;

/// One analytic value for one metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// The metric, named as the simulator names it.
    pub metric: String,
    /// The predicted value.
    pub value: f64,
    /// The method, e.g. `"M/M/1"`, `"exact MVA"`.
    pub method: String,
    /// True for an exact result (under the model's assumptions), false for an approximation.
    pub exact: bool,
    /// For an approximation: its measured error on this kind of metric in the validation
    /// suite, if measured ([`measured`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<measured::MeasuredError>,
    /// True for the prediction `analyze` recommends for its metric ([`measured::annotate`]).
    pub recommended: bool,
}

/// A method that does not apply, and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refusal {
    /// The method.
    pub method: String,
    /// Why it does not apply.
    pub reason: String,
}

/// Bounds a metric must lie within.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bound {
    /// The metric, named as the simulator names it.
    pub metric: String,
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
    /// The method, e.g. `"asymptotic bounds"`.
    pub method: String,
}

/// Visits and demand of one class at one service station.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StationDemand {
    /// The station.
    pub station: String,
    /// The class.
    pub class: String,
    /// Visits per job (open class) or per cycle (closed class, relative to its reference
    /// station).
    pub visits: f64,
    /// Demand `D = V S`: visits times mean service time per visit.
    pub demand: f64,
    /// Servers at the station (`None` for a delay).
    pub servers: Option<u32>,
}

/// The station that limits a class's throughput.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bottleneck {
    /// The class.
    pub class: String,
    /// The station with the largest demand per server, `D_max`.
    pub station: String,
    /// Its demand per server; the class's throughput cannot exceed `1 / D_max`.
    pub demand_per_server: f64,
    /// Closed class at single-server queues and delays: `N* = (D + Z) / D_max`, the population
    /// beyond which the bottleneck saturates (`D` the queueing demands, `Z` the delays').
    pub saturation_population: Option<f64>,
}

/// Every applicable prediction and every refusal for a network.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Analysis {
    /// Predictions, in the order the methods were tried.
    pub predictions: Vec<Prediction>,
    /// Bounds on metrics (closed single-class networks).
    pub bounds: Vec<Bound>,
    /// Methods that do not apply.
    pub refusals: Vec<Refusal>,
    /// Visits and demands per class and service station (any distribution).
    pub demands: Vec<StationDemand>,
    /// Each class's bottleneck station (any distribution).
    pub bottlenecks: Vec<Bottleneck>,
    /// Terms of a model that are not simulated metrics (`[spmd]`: `T1`, `h(c)`, `z`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<Prediction>,
}

impl Analysis {
    /// Appends everything `other` found after what this one found (analyses run side by side,
    /// kept in the order they would have run one after another).
    pub fn append(&mut self, mut other: Analysis) {
        self.predictions.append(&mut other.predictions);
        self.bounds.append(&mut other.bounds);
        self.refusals.append(&mut other.refusals);
        self.demands.append(&mut other.demands);
        self.bottlenecks.append(&mut other.bottlenecks);
        self.terms.append(&mut other.terms);
    }

    /// Adds a prediction of `metric` by `method`, unless `value` is not finite (a formula
    /// outside its domain says nothing).
    pub fn add(&mut self, metric: String, value: f64, method: &str, exact: bool) {
        if value.is_finite() {
            self.predictions.push(Prediction {
                metric,
                value,
                method: method.to_owned(),
                exact,
                measured: None,
                recommended: false,
            });
        }
    }

    /// Turns every prediction whose value is not a finite number (a formula that overflows or
    /// divides by zero at these parameters, pushed without [`Analysis::add`]) into a refusal
    /// saying so: no analysis reports an infinite or NaN prediction.
    pub fn refuse_non_finite(&mut self) {
        let (finite, other): (Vec<Prediction>, Vec<Prediction>) =
            std::mem::take(&mut self.predictions)
                .into_iter()
                .partition(|p| p.value.is_finite());
        self.predictions = finite;
        for p in other {
            self.refuse(
                &p.method,
                format!(
                    "{} = {}: not a finite number at these parameters (the formula overflows or divides by zero)",
                    p.metric, p.value
                ),
            );
        }
    }

    /// Records that `method` does not apply, and why.
    pub fn refuse(&mut self, method: &str, reason: impl Into<String>) {
        self.refusals.push(Refusal {
            method: method.to_owned(),
            reason: reason.into(),
        });
    }
}

/// `method` as labelled in a prediction: exact when `exact` and nothing breaks its
/// assumptions, otherwise an approximation whose label names the assumption that breaks.
pub fn labelled(method: &str, exact: bool, problem: Option<&str>) -> (String, bool) {
    match problem {
        None => (method.to_owned(), exact),
        Some(p) => (format!("{method}; {p}"), false),
    }
}

/// A number for a method label: at most three decimals, no trailing zeros.
pub fn short(x: f64) -> String {
    let s = format!("{x:.3}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// `method` as labelled when the assumptions in `breaks` fail: exact when there are none,
/// otherwise `<method>; approximation: <breaks joined by "; ">`.
pub fn approximation(method: &str, breaks: &[String]) -> (String, bool) {
    if breaks.is_empty() {
        (method.to_owned(), true)
    } else {
        (
            format!("{method}; approximation: {}", breaks.join("; ")),
            false,
        )
    }
}
