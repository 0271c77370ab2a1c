//! LogGP(S) message costs (Alexandrov et al.'s LogGP with LogGOPS's `O` and `S`, as LogGOPSim
//! implements them) and the closed forms of collective algorithms under them.
//!
//! A message of `s` bytes between two endpoints:
//!
//! - the sender's CPU is busy `o + (s-1) O` and its NIC (sending side) `g + (s-1) G`; the next
//!   send from the same CPU and NIC starts `max(o + (s-1) O, g + (s-1) G)` later;
//! - the message reaches the receiver `o + L` after the send started (whatever its size);
//! - the receiver's CPU is then busy `o + (s-1) max(O, G)` and its NIC (receiving side)
//!   `g + (s-1) G`, charged when the message arrives (or when both are free), whether or not
//!   the receive is posted yet;
//! - messages of more than `S` bytes are sent by rendezvous: the send completes only when the
//!   receive matches it, and the sender's CPU and NIC are held until then.
//!
//! An idle pair thus costs `2o + L + (s-1) G` (with `O <= G`) from the start of the send to the
//! end of the receive. Times are in any unit (the closed forms are linear in the parameters);
//! the simulator counts picoseconds, and a closed form evaluated with parameters in whole
//! picoseconds is exact in `f64` up to `2^53` ps (about 2.5 hours).
//!
//! The formulas for `s = 0` follow LogGOPSim, which computes `s - 1` in unsigned 64-bit
//! arithmetic: its wrap-around makes a 0-byte message cost `o - O` (sender CPU), `g - G`
//! (NICs) and `o` minus the smaller non-zero of `O` and `G` (receiver CPU: `o - G` when
//! `O = 0`), each clamped at zero here.

/// LogGP(S) parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogGp {
    /// `L`: latency of the wire, from the end of the sender's overhead to the receiver.
    pub l: f64,
    /// `o`: CPU overhead per message, at the sender and at the receiver.
    pub o: f64,
    /// `g`: gap per message at a NIC.
    pub g: f64,
    /// `G`: gap per byte at a NIC.
    pub big_g: f64,
    /// `O`: CPU overhead per byte (LogGOPS).
    pub big_o: f64,
    /// `S`: the largest message sent eagerly; larger ones use rendezvous.
    pub s: u64,
}

impl LogGp {
    /// LogGOPSim's defaults, in seconds: `L = 2.5 us`, `o = 1.5 us`, `g = 1 us`, `G = 6 ns`,
    /// `O = 0`, `S = 65535` bytes.
    pub const LOGGOPSIM: LogGp = LogGp {
        l: 2.5e-6,
        o: 1.5e-6,
        g: 1e-6,
        big_g: 6e-9,
        big_o: 0.0,
        s: 65535,
    };

    /// The same parameters with every time multiplied by `k` (e.g. to picoseconds).
    pub fn scaled(&self, k: f64) -> LogGp {
        LogGp {
            l: self.l * k,
            o: self.o * k,
            g: self.g * k,
            big_g: self.big_g * k,
            big_o: self.big_o * k,
            s: self.s,
        }
    }

    /// `s - 1` as LogGOPSim multiplies it (`-1` for an empty message).
    fn extra(s: f64) -> f64 {
        s - 1.0
    }

    /// The sender's CPU time for `s` bytes: `o + (s-1) O`.
    pub fn send_cpu(&self, s: f64) -> f64 {
        (self.o + Self::extra(s) * self.big_o).max(0.0)
    }

    /// The time a NIC side is busy with `s` bytes: `g + (s-1) G`.
    pub fn nic(&self, s: f64) -> f64 {
        (self.g + Self::extra(s) * self.big_g).max(0.0)
    }

    /// The receiver's CPU time for `s` bytes: `o + (s-1) max(O, G)` (for `s = 0`, `o` minus the
    /// smaller non-zero of `O` and `G`, as LogGOPSim's wrap-around gives).
    pub fn recv_cpu(&self, s: f64) -> f64 {
        if s == 0.0 {
            let nonzero = [self.big_o, self.big_g].into_iter().filter(|&x| x > 0.0);
            let m = nonzero.fold(f64::INFINITY, f64::min);
            return if m.is_finite() {
                (self.o - m).max(0.0)
            } else {
                self.o
            };
        }
        (self.o + Self::extra(s) * self.big_o.max(self.big_g)).max(0.0)
    }

    /// Between the starts of two sends of `s` bytes from one CPU and NIC:
    /// `max(o + (s-1) O, g + (s-1) G)`.
    pub fn send_gap(&self, s: f64) -> f64 {
        self.send_cpu(s).max(self.nic(s))
    }

    /// From the start of a send to the end of its receive on an idle pair:
    /// `o + L + o + (s-1) max(O, G)`.
    pub fn message(&self, s: f64) -> f64 {
        self.o + self.l + self.recv_cpu(s)
    }

    /// Whether `s` bytes go by rendezvous (more than `S`).
    pub fn rendezvous(&self, s: f64) -> bool {
        s > self.s as f64
    }
}

#[cfg(test)]
mod tests {
    use super::LogGp;

    #[test]
    fn an_idle_pair_costs_2o_plus_l_plus_the_bytes() {
        let p = LogGp::LOGGOPSIM.scaled(1e9);
        assert!((p.message(1.0) - 5500.0).abs() < 1e-9);
        assert!((p.message(1000.0) - 11_494.0).abs() < 1e-9);
        // 0 bytes: LogGOPSim's wrap-around, o - G at the receiver
        assert!((p.recv_cpu(0.0) - 1494.0).abs() < 1e-9);
        assert!((p.nic(0.0) - 994.0).abs() < 1e-9);
        assert!((p.send_gap(8.0) - 1500.0).abs() < 1e-9);
    }
}
