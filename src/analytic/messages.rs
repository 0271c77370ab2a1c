//! Message costs of the lecture notes (Grama, Gupta, Karypis & Kumar's model): a message of `m`
//! bytes crossing `l` links, with startup `t_s`, per-hop time `t_h` and per-byte time `t_w`.
//!
//! | routing | cost |
//! |---|---|
//! | store-and-forward | `t_s + (m t_w + t_h) l` |
//! | cut-through (and packet routing) | `t_s + l t_h + m t_w` |
//!
//! Both hold on an idle network; "if a link takes multiple messages, the corresponding `t_w`
//! term must be scaled up by the number of messages" (the lecture), which is what the
//! simulation of shared links measures.

use super::error::{AnalyticError, Result};

/// The parameters of one message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageCost {
    /// Startup `t_s`.
    pub startup: f64,
    /// Per-hop time `t_h`.
    pub per_hop: f64,
    /// Per-byte time `t_w`.
    pub per_byte: f64,
}

impl MessageCost {
    fn check(&self, bytes: f64) -> Result<()> {
        for (name, v) in [
            ("t_s", self.startup),
            ("t_h", self.per_hop),
            ("t_w", self.per_byte),
            ("m", bytes),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(AnalyticError::InvalidParameter {
                    what: name.to_owned(),
                    value: v,
                });
            }
        }
        Ok(())
    }

    /// Store-and-forward: `t_s + (m t_w + t_h) l`.
    pub fn store_and_forward(&self, bytes: f64, links: u32) -> Result<f64> {
        self.check(bytes)?;
        Ok(self.startup + (bytes * self.per_byte + self.per_hop) * f64::from(links))
    }

    /// Cut-through: `t_s + l t_h + m t_w` (no bytes cross when `l = 0`: a local message costs
    /// the startup only).
    pub fn cut_through(&self, bytes: f64, links: u32) -> Result<f64> {
        self.check(bytes)?;
        if links == 0 {
            return Ok(self.startup);
        }
        Ok(self.startup + f64::from(links) * self.per_hop + bytes * self.per_byte)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lecture_formulas() {
        let c = MessageCost {
            startup: 1.0,
            per_hop: 2.0,
            per_byte: 0.1,
        };
        assert_eq!(
            c.store_and_forward(100.0, 6).unwrap(),
            1.0 + (10.0 + 2.0) * 6.0
        );
        assert_eq!(c.cut_through(100.0, 6).unwrap(), 1.0 + 12.0 + 10.0);
        // one hop: the two agree
        assert_eq!(
            c.store_and_forward(100.0, 1).unwrap(),
            c.cut_through(100.0, 1).unwrap()
        );
        assert!(c.cut_through(-1.0, 1).is_err());
    }
}
