//! What a run costs and how fair it is: the herd effect in numbers. Counted as the run goes,
//! summarized once at the end.

use serde::Serialize;

/// Raw counts of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Metrics {
    /// World steps applied.
    pub steps: u64,
    /// Virtual time at the end of the run, in microseconds.
    pub virtual_us: u64,
    /// Times a client came to hold the lock.
    pub acquisitions: u64,
    pub releases: u64,
    /// Watch notifications the server queued for connected clients.
    pub notifications: u64,
    /// Notifications handled by a client that was waiting for the lock.
    pub wakeups: u64,
    /// Wakeups after which the client went back to waiting without acquiring.
    pub futile_wakeups: u64,
    /// Requests answered (a lost reply is answered by ConnectionLoss).
    pub requests: u64,
    pub get_children: u64,
    /// Faults that struck, by kind (FaultKind order).
    pub faults: [u64; zklab_model::FaultKind::COUNT],
    /// Time from asking to holding, per acquisition, in microseconds.
    #[serde(skip)]
    pub latencies_us: Vec<u64>,
    /// Pairs of first-round acquisitions granted in the reverse of the order they were asked.
    pub out_of_order_pairs: u64,
    /// Pairs of first-round acquisitions.
    pub pairs: u64,
    /// Replies a client refused as longer than its jute.maxbuffer (each dropped its connection).
    pub refused_replies: u64,
    /// The fewest children a refused listing held: the queue length at which listing the lock
    /// stops working for the Java client.
    pub shortest_refused_listing: Option<u64>,
}

/// The herd table's row for one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Herd {
    pub notifications_per_release: f64,
    pub futile_wakeups_per_acquisition: f64,
    pub get_children_per_acquisition: f64,
    pub requests_per_acquisition: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p90: f64,
    pub latency_ms_p99: f64,
    pub latency_ms_max: f64,
    /// The fraction of pairs of first-round acquisitions granted in the order they were asked
    /// (1: first come, first served).
    pub fairness: f64,
}

impl Metrics {
    pub fn herd(&self) -> Herd {
        let per = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        let mut sorted = self.latencies_us.clone();
        sorted.sort_unstable();
        let pct = |p: f64| match sorted.len() {
            0 => 0.0,
            n => sorted[((n - 1) as f64 * p).round() as usize] as f64 / 1000.0,
        };
        Herd {
            notifications_per_release: per(self.notifications, self.releases),
            futile_wakeups_per_acquisition: per(self.futile_wakeups, self.acquisitions),
            get_children_per_acquisition: per(self.get_children, self.acquisitions),
            requests_per_acquisition: per(self.requests, self.acquisitions),
            latency_ms_p50: pct(0.5),
            latency_ms_p90: pct(0.9),
            latency_ms_p99: pct(0.99),
            latency_ms_max: pct(1.0),
            fairness: if self.pairs == 0 { 1.0 } else { 1.0 - per(self.out_of_order_pairs, self.pairs) },
        }
    }
}

/// Pairs `i < j` with `ranks[i] > ranks[j]`, by merge sort: O(n log n) for ten thousand clients.
pub fn inversions(ranks: &mut [u32]) -> u64 {
    if ranks.len() < 2 {
        return 0;
    }
    let mid = ranks.len() / 2;
    let mut count = inversions(&mut ranks[..mid]) + inversions(&mut ranks[mid..]);
    let mut merged = Vec::with_capacity(ranks.len());
    let (mut a, mut b) = (0, mid);
    while a < mid && b < ranks.len() {
        if ranks[a] <= ranks[b] {
            merged.push(ranks[a]);
            a += 1;
        } else {
            merged.push(ranks[b]);
            count += (mid - a) as u64;
            b += 1;
        }
    }
    merged.extend_from_slice(&ranks[a..mid]);
    merged.extend_from_slice(&ranks[b..]);
    ranks.copy_from_slice(&merged);
    count
}

#[cfg(test)]
mod tests {
    use super::inversions;

    #[test]
    fn inversions_count_pairs_out_of_order() {
        assert_eq!(inversions(&mut [0, 1, 2, 3]), 0);
        assert_eq!(inversions(&mut [3, 2, 1, 0]), 6);
        assert_eq!(inversions(&mut [1, 0, 3, 2]), 2);
        assert_eq!(inversions(&mut []), 0);
    }
}
