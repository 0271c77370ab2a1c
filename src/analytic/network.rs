//! Station kinds shared by the network solvers, and the product-form check on them.

use serde::{Deserialize, Serialize};

use super::check;
use super::error::{AnalyticError, Result};

/// What kind of service center a station is, as far as product-form solvers care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CenterKind {
    /// Infinite server (pure delay, think time): no queueing; any service distribution.
    Delay,
    /// One FCFS server with exponential service. Product form needs the mean service time to
    /// be the same for every class (see [`check_class_independent_service`]).
    Queue,
    /// One processor-sharing server: any service distribution, class-dependent means allowed.
    /// The closed solvers treat it exactly like [`CenterKind::Queue`].
    ProcessorSharing,
    /// `c` identical FCFS exponential servers sharing one queue (load-dependent rate
    /// `min(j, c) / E[S]` with `j` jobs present); class-independent mean as for `Queue`.
    MultiServer(u32),
}

impl CenterKind {
    /// Number of servers: `None` for [`CenterKind::Delay`], 1 for the single-server kinds.
    pub fn servers(self) -> Option<u32> {
        match self {
            Self::Delay => None,
            Self::Queue | Self::ProcessorSharing => Some(1),
            Self::MultiServer(c) => Some(c),
        }
    }

    /// True for the kinds whose product form requires a class-independent mean service time
    /// (FCFS single and multi-server).
    pub fn needs_class_independent_service(self) -> bool {
        matches!(self, Self::Queue | Self::MultiServer(_))
    }

    /// Rejects `MultiServer(0)`.
    pub(crate) fn validate(self, index: usize) -> Result<Self> {
        if let Self::MultiServer(c) = self {
            check::at_least(&format!("servers of center {index}"), c, 1)?;
        }
        Ok(self)
    }
}

/// Relative tolerance under which two mean service times count as equal.
const SAME_MEAN_TOLERANCE: f64 = 1e-9;

/// Checks the BCMP condition that FCFS stations ([`CenterKind::Queue`],
/// [`CenterKind::MultiServer`]) serve every class that visits them with the same mean.
///
/// `service[r][k]` is class `r`'s mean service time per visit at center `k` and `visits[r][k]`
/// its visit ratio; classes with zero visits to a center are ignored there. Means count as equal
/// within a relative `1e-9`. A multiclass network failing this is not product form (Baskett,
/// Chandy, Muntz and Palacios, JACM 1975), so neither MVA nor the Jackson formulas apply to it.
///
/// Errors: `NotApplicable` naming the first offending center; `DimensionMismatch` if the
/// arrays disagree; `InvalidParameter` for negative or non-finite entries.
pub fn check_class_independent_service(
    kinds: &[CenterKind],
    service: &[Vec<f64>],
    visits: &[Vec<f64>],
) -> Result<()> {
    check::same_len("visits (classes)", service.len(), visits.len())?;
    for (r, (s_row, v_row)) in service.iter().zip(visits).enumerate() {
        check::same_len(&format!("service[{r}]"), kinds.len(), s_row.len())?;
        check::same_len(&format!("visits[{r}]"), kinds.len(), v_row.len())?;
    }
    for (k, kind) in kinds.iter().enumerate() {
        if !kind.needs_class_independent_service() {
            continue;
        }
        let mut reference: Option<f64> = None;
        for (r, (s_row, v_row)) in service.iter().zip(visits).enumerate() {
            let v = check::non_negative(&format!("visits[{r}][{k}]"), v_row[k])?;
            let s = check::non_negative(&format!("service[{r}][{k}]"), s_row[k])?;
            if v == 0.0 {
                continue;
            }
            match reference {
                None => reference = Some(s),
                Some(s0) if (s - s0).abs() <= SAME_MEAN_TOLERANCE * s0.max(s) => {}
                Some(s0) => {
                    return Err(AnalyticError::NotApplicable(format!(
                        "center {k} is FCFS with class-dependent mean service times \
                         ({s0} and {s} for class {r}); the network is not product form"
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fcfs_with_different_means_is_rejected_ps_is_not() {
        let service = vec![vec![1.0, 1.0], vec![2.0, 2.0]];
        let visits = vec![vec![1.0, 1.0], vec![1.0, 1.0]];
        let ps = [CenterKind::ProcessorSharing, CenterKind::Delay];
        assert!(check_class_independent_service(&ps, &service, &visits).is_ok());
        let fcfs = [CenterKind::ProcessorSharing, CenterKind::Queue];
        let err = check_class_independent_service(&fcfs, &service, &visits).unwrap_err();
        assert!(matches!(err, AnalyticError::NotApplicable(ref m) if m.contains("center 1")));
    }

    #[test]
    fn classes_that_do_not_visit_are_ignored() {
        let service = vec![vec![1.0], vec![5.0]];
        let visits = vec![vec![1.0], vec![0.0]];
        assert!(check_class_independent_service(&[CenterKind::Queue], &service, &visits).is_ok());
        let bad = vec![vec![1.0], vec![f64::NAN]];
        assert!(check_class_independent_service(&[CenterKind::Queue], &service, &bad).is_err());
    }

    #[test]
    fn servers_and_validation() {
        assert_eq!(CenterKind::Delay.servers(), None);
        assert_eq!(CenterKind::MultiServer(4).servers(), Some(4));
        assert!(CenterKind::MultiServer(0).validate(3).is_err());
    }
}
