//! The order in which LogGOPSim starts operations that become ready together: `std::sort` by
//! kind (sends, receives, calcs) as libstdc++ (GCC 12) implements it, ported step by step
//! (`bits/stl_algo.h`: `__introsort_loop`, `__move_median_to_first`, `__unguarded_partition`,
//! `__final_insertion_sort`; `bits/stl_heap.h` for the heapsort fallback). It is not stable:
//! with more than 16 elements, equal kinds are permuted, which changes which message a receive
//! matches. parsim's own order ([`stable`]) keeps the order in which they became ready.

/// Sorts `v` by `key`, keeping the order of equal keys (an insertion sort: the lists are short).
pub fn stable<T: Copy>(v: &mut [T], key: impl Fn(&T) -> u8) {
    for i in 1..v.len() {
        let x = v[i];
        let k = key(&x);
        let mut j = i;
        while j > 0 && key(&v[j - 1]) > k {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Sorts `v` by `key` exactly as libstdc++'s `std::sort` with the comparator
/// `key(a) < key(b)` does.
pub fn libstdcxx<T: Copy>(v: &mut [T], key: impl Fn(&T) -> u8 + Copy) {
    let n = v.len();
    if n == 0 {
        return;
    }
    let lt = move |a: &T, b: &T| key(a) < key(b);
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort_loop(v, 0, n, depth, lt);
    if n > THRESHOLD {
        insertion_sort(v, 0, THRESHOLD, lt);
        for i in THRESHOLD..n {
            unguarded_linear_insert(v, i, lt);
        }
    } else {
        insertion_sort(v, 0, n, lt);
    }
}

/// libstdc++'s `_S_threshold`.
const THRESHOLD: usize = 16;

fn insertion_sort<T: Copy>(v: &mut [T], first: usize, last: usize, lt: impl Fn(&T, &T) -> bool) {
    if first == last {
        return;
    }
    for i in first + 1..last {
        if lt(&v[i], &v[first]) {
            let x = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = x;
        } else {
            unguarded_linear_insert(v, i, &lt);
        }
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, lt: impl Fn(&T, &T) -> bool) {
    let x = v[last];
    // libstdc++ relies on a smaller element before `last`; the bound only keeps Rust safe
    while last > 0 && lt(&x, &v[last - 1]) {
        v[last] = v[last - 1];
        last -= 1;
    }
    v[last] = x;
}

fn move_median_to_first<T: Copy>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    lt: impl Fn(&T, &T) -> bool,
) {
    if lt(&v[a], &v[b]) {
        if lt(&v[b], &v[c]) {
            v.swap(result, b);
        } else if lt(&v[a], &v[c]) {
            v.swap(result, c);
        } else {
            v.swap(result, a);
        }
    } else if lt(&v[a], &v[c]) {
        v.swap(result, a);
    } else if lt(&v[b], &v[c]) {
        v.swap(result, c);
    } else {
        v.swap(result, b);
    }
}

fn unguarded_partition<T: Copy>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    lt: impl Fn(&T, &T) -> bool,
) -> usize {
    loop {
        while lt(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while lt(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn introsort_loop<T: Copy>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    mut depth: usize,
    lt: impl Fn(&T, &T) -> bool + Copy,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heapsort(v, first, last, lt);
            return;
        }
        depth -= 1;
        let mid = first + (last - first) / 2;
        move_median_to_first(v, first, first + 1, mid, last - 1, lt);
        let cut = unguarded_partition(v, first + 1, last, first, lt);
        introsort_loop(v, cut, last, depth, lt);
        last = cut;
    }
}

/// `__partial_sort(first, last, last)`: make_heap then sort_heap.
fn heapsort<T: Copy>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    lt: impl Fn(&T, &T) -> bool + Copy,
) {
    let len = last - first;
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[first + parent];
            adjust_heap(v, first, parent, len, value, lt);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    while last - first > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[first];
        adjust_heap(v, first, 0, last - first, value, lt);
    }
}

fn adjust_heap<T: Copy>(
    v: &mut [T],
    first: usize,
    mut hole: usize,
    len: usize,
    value: T,
    lt: impl Fn(&T, &T) -> bool,
) {
    let top = hole;
    let mut second = hole;
    while len >= 1 && second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if lt(&v[first + second], &v[first + second - 1]) {
            second -= 1;
        }
        v[first + hole] = v[first + second];
        hole = second;
    }
    if len & 1 == 0 && len >= 2 && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[first + hole] = v[first + second - 1];
        hole = second - 1;
    }
    // __push_heap
    while hole > top {
        let parent = (hole - 1) / 2;
        if !lt(&v[first + parent], &value) {
            break;
        }
        v[first + hole] = v[first + parent];
        hole = parent;
    }
    v[first + hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventeen_equal_sends_come_out_as_loggopsim_started_them() {
        // /work notes: 17 independent sends to ranks 1..17, seen with LogGOPSim -v
        let mut v: Vec<(u8, u32)> = (1..=17).map(|r| (1, r)).collect();
        libstdcxx(&mut v, |x| x.0);
        let order: Vec<u32> = v.iter().map(|x| x.1).collect();
        assert_eq!(
            order,
            [9, 17, 16, 15, 14, 13, 12, 11, 10, 1, 8, 7, 6, 5, 4, 3, 2]
        );
        let mut w: Vec<(u8, u32)> = (1..=16).map(|r| (1, r)).collect();
        libstdcxx(&mut w, |x| x.0);
        assert!(
            w.iter().map(|x| x.1).eq(1..=16),
            "up to 16: insertion sort, stable"
        );
    }

    #[test]
    fn both_sort_by_kind() {
        for n in [0, 1, 5, 16, 17, 40, 100, 1000] {
            let v: Vec<(u8, u32)> = (0..n).map(|i| ((i * 7 % 3 + 1) as u8, i)).collect();
            let mut a = v.clone();
            libstdcxx(&mut a, |x| x.0);
            assert!(a.windows(2).all(|w| w[0].0 <= w[1].0), "n = {n}");
            let mut sorted: Vec<u32> = a.iter().map(|x| x.1).collect();
            sorted.sort();
            assert!(sorted.iter().copied().eq(0..n));
            let mut b = v.clone();
            stable(&mut b, |x| x.0);
            let mut expect = v.clone();
            expect.sort_by_key(|x| x.0);
            assert_eq!(b, expect);
        }
    }
}
