//! The job arena: jobs live in a `Vec` and are referred to by index; freed slots are reused,
//! so a steady state allocates nothing.

use crate::time::SimTime;

/// No parent: the job is not a fork task.
pub const NO_PARENT: u32 = u32::MAX;

/// One job (or fork task) in the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Current class index.
    pub class: u32,
    /// The forked parent this task belongs to, or [`NO_PARENT`].
    pub parent: u32,
    /// For a forked parent: tasks still to reach the join.
    pub pending: u32,
    /// The station where the job is now (for a forked parent: its fork).
    pub station: u32,
    /// Start of the job's life (open class) or of its current cycle (closed class).
    pub born: SimTime,
    /// When the job arrived at the station where it is now.
    pub arrived: SimTime,
}

/// No free slot.
const NO_SLOT: u32 = u32::MAX;

/// Slots of jobs with a free list threaded through the free slots themselves: a free slot's
/// `parent` field holds the next free slot (or none), so releasing and reusing a slot touch
/// no second vector.
#[derive(Debug)]
pub struct Jobs {
    slots: Vec<Job>,
    /// Per slot: when a closed job last left its reference station (kept apart from the
    /// record, which departures carry in their events, and read only at a cycle's ends).
    left: Vec<SimTime>,
    /// The most recently released slot, reused first.
    free: u32,
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs {
            slots: Vec::new(),
            left: Vec::new(),
            free: NO_SLOT,
        }
    }
}

impl Jobs {
    /// Stores a job and returns its index.
    #[inline]
    pub fn alloc(&mut self, job: Job) -> u32 {
        let i = self.free;
        match self.slots.get_mut(i as usize) {
            Some(slot) => {
                self.free = slot.parent;
                store(slot, job);
                self.left[i as usize] = job.born;
                i
            }
            None => {
                self.slots.push(job);
                self.left.push(job.born);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Job `id` (of a closed class) leaves its reference station at `now`.
    #[inline]
    pub fn leave_reference(&mut self, id: u32, now: SimTime) {
        self.left[id as usize] = now;
    }

    /// When job `id` last left its reference station (when it was stored, if it never did).
    #[inline]
    pub fn left_reference(&self, id: u32) -> SimTime {
        self.left[id as usize]
    }

    /// Stores `job` as the record of job `id`.
    #[inline]
    pub fn set(&mut self, id: u32, job: Job) {
        store(&mut self.slots[id as usize], job);
    }

    /// Slots in use or free: the most jobs that were in the network at once.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True before the first job.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Releases a job's slot for reuse.
    #[inline]
    pub fn release(&mut self, id: u32) {
        self.slots[id as usize].parent = self.free;
        self.free = id;
    }
}

/// Writes `job` into `slot` field by field: a whole-record copy is two 16-byte loads of a record
/// the caller has usually just written in 4- and 8-byte stores, which the processor cannot
/// forward to them (a stall of about a dozen cycles, at every open arrival and every job that
/// queues).
#[inline(always)]
fn store(slot: &mut Job, job: Job) {
    slot.class = job.class;
    slot.parent = job.parent;
    slot.pending = job.pending;
    slot.station = job.station;
    slot.born = job.born;
    slot.arrived = job.arrived;
}

impl std::ops::Index<u32> for Jobs {
    type Output = Job;
    #[inline]
    fn index(&self, id: u32) -> &Job {
        &self.slots[id as usize]
    }
}

impl std::ops::IndexMut<u32> for Jobs {
    #[inline]
    fn index_mut(&mut self, id: u32) -> &mut Job {
        &mut self.slots[id as usize]
    }
}
