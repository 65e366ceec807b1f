//! A world written down and read back: [`World::checkpoint`] and [`World::from_checkpoint`].
//!
//! A checkpoint is the whole world (clock, event queue, RNG, API server, every controller with
//! its informer and work queue, trace, provenance) as MessagePack (`rmp-serde`, structs as
//! maps: the world has maps keyed by structs, which JSON cannot write), so a world read back continues
//! exactly as the one written would have: the same trace, step for step, and the same
//! checkpoint at every later point (the tests below run every scenario so). It is what a reload
//! can use instead of replaying the session's actions from the seed (issue 20).
//!
//! The bytes: `converge` (8 bytes), the format number (u32, little-endian), the build's version
//! (a length byte, then the text), the FNV-1a 64 digest of what follows (u64, little-endian),
//! then the world. Another format, another build, or bytes damaged in storage are refused with
//! a [`CheckpointError`] before anything is decoded, and the caller replays from the seed.
//!
//! The world shares one version of an object between the API server's store, the world's
//! mirror, every informer holding it and the queued deliveries; written as plain `Arc`s, each
//! would be its own copy, in the text and again in memory once read back. So every shared
//! `Value` field is written through [`shared`]: the first time a version is met its number and
//! body are written, `[n, {...}]`, and every later meeting only `n`; reading builds the version
//! once and hands out the same `Arc`. Serde visits fields in declaration order both ways, so
//! the reader meets each version's body before its numbers.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::json::Value;
use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::ser::SerializeTuple;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::world::World;

/// The checkpoint format's version: a checkpoint of another version is refused (the caller
/// replays instead). Bumped whenever a field of the world changes.
pub const FORMAT: u32 = 3;

/// The build that wrote a checkpoint: another build's engine may continue differently.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Why a checkpoint could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("not a converge checkpoint")]
    NotACheckpoint,
    #[error("checkpoint format {found}, this build reads format {FORMAT}")]
    Format { found: u32 },
    #[error("checkpoint written by converge {found}, this is converge {VERSION}")]
    Version { found: String },
    #[error("checkpoint damaged: its digest is {found:016x}, its bytes give {computed:016x}")]
    Damaged { found: u64, computed: u64 },
    #[error("checkpoint unreadable: {0}")]
    Unreadable(#[from] rmp_serde::decode::Error),
}

/// The checkpoint's first bytes.
const MAGIC: &[u8; 8] = b"converge";

/// The digest of the world's bytes, FNV-1a 64 as [`super::trace_hash`] uses it: a checkpoint
/// damaged in storage is refused before any of it is decoded.
fn digest(bytes: &[u8]) -> u64 {
    super::fnv1a_64(super::FNV_OFFSET, bytes)
}

/// A checkpoint taken apart: the header's fields and the world's bytes.
struct Parts<'a> {
    format: u32,
    version: &'a [u8],
    digest: u64,
    world: &'a [u8],
}

/// The header's fields, in the order written: the magic, the format (u32, little-endian), the
/// version's length (one byte) and bytes, the world's digest (u64, little-endian).
fn split_header(bytes: &[u8]) -> Result<Parts<'_>, CheckpointError> {
    let rest = bytes
        .strip_prefix(MAGIC.as_slice())
        .ok_or(CheckpointError::NotACheckpoint)?;
    let (format, rest) = rest
        .split_first_chunk::<4>()
        .ok_or(CheckpointError::NotACheckpoint)?;
    let (len, rest) = rest.split_first().ok_or(CheckpointError::NotACheckpoint)?;
    let (version, rest) = rest
        .split_at_checked(usize::from(*len))
        .ok_or(CheckpointError::NotACheckpoint)?;
    let (found, world) = rest
        .split_first_chunk::<8>()
        .ok_or(CheckpointError::NotACheckpoint)?;
    Ok(Parts {
        format: u32::from_le_bytes(*format),
        version,
        digest: u64::from_le_bytes(*found),
        world,
    })
}

thread_local! {
    /// While writing: the number given to each shared version met so far, by address.
    static WRITTEN: RefCell<Option<HashMap<usize, u32>>> = const { RefCell::new(None) };
    /// While reading: every shared version read so far, by number.
    static READ: RefCell<Option<Vec<Arc<Value>>>> = const { RefCell::new(None) };
}

/// Clears a table when the write or read ends, also on an error or a panic.
struct Table<'a, T: 'static>(
    &'static std::thread::LocalKey<RefCell<Option<T>>>,
    std::marker::PhantomData<&'a ()>,
);

impl<T: 'static> Table<'_, T> {
    fn open(key: &'static std::thread::LocalKey<RefCell<Option<T>>>, empty: T) -> Self {
        key.with(|t| *t.borrow_mut() = Some(empty));
        Table(key, std::marker::PhantomData)
    }
}

impl<T: 'static> Drop for Table<'_, T> {
    fn drop(&mut self) {
        self.0.with(|t| *t.borrow_mut() = None);
    }
}

impl World {
    /// The world as a checkpoint: [`World::from_checkpoint`] reads it back.
    pub fn checkpoint(&self) -> Vec<u8> {
        let _table = Table::open(&WRITTEN, HashMap::new());
        let version = VERSION.as_bytes();
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT.to_le_bytes());
        out.push(u8::try_from(version.len()).expect("a version under 256 bytes"));
        out.extend_from_slice(version);
        // The digest's place, filled in once the world after it is written.
        let at = out.len();
        out.extend_from_slice(&[0; 8]);
        let mut ser = rmp_serde::Serializer::new(&mut out).with_struct_map();
        self.serialize(&mut ser)
            .expect("a world serializes: it holds no type MessagePack lacks");
        let d = digest(&out[at + 8..]);
        out[at..at + 8].copy_from_slice(&d.to_le_bytes());
        out
    }

    /// The world a [`World::checkpoint`] wrote, if this build wrote it and it is undamaged.
    pub fn from_checkpoint(bytes: &[u8]) -> Result<World, CheckpointError> {
        World::from_checkpoint_at(bytes.len(), &mut |at, buf| {
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
        })
    }

    /// [`World::from_checkpoint`] of `len` bytes held elsewhere, copied a piece at a time by
    /// `read_at(offset, buf)` (which fills all of `buf`): the playground reads a checkpoint out
    /// of JavaScript's memory this way, so its 21 MB are not copied into the wasm memory whole
    /// beside the world they become (which would stay the tab's high-water mark).
    pub fn from_checkpoint_at(
        len: usize,
        read_at: &mut dyn FnMut(usize, &mut [u8]),
    ) -> Result<World, CheckpointError> {
        // The header is at most the magic, the format, a length byte, 255 bytes of version and
        // the digest.
        let mut head = vec![0; len.min(MAGIC.len() + 4 + 1 + 255 + 8)];
        read_at(0, &mut head);
        let Parts {
            format,
            version,
            digest: found,
            world,
        } = split_header(&head)?;
        if format != FORMAT {
            return Err(CheckpointError::Format { found: format });
        }
        if version != VERSION.as_bytes() {
            return Err(CheckpointError::Version {
                found: String::from_utf8_lossy(version).into_owned(),
            });
        }
        let start = head.len() - world.len();
        let mut pieces = Pieces {
            read_at,
            at: start,
            end: len,
        };
        let mut computed = super::FNV_OFFSET;
        let mut buf = vec![0; PIECE];
        loop {
            let n = std::io::Read::read(&mut pieces, &mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            computed = super::fnv1a_64(computed, &buf[..n]);
        }
        if computed != found {
            return Err(CheckpointError::Damaged { found, computed });
        }
        pieces.at = start;
        let _table = Table::open(&READ, Vec::new());
        let reader = std::io::BufReader::with_capacity(PIECE, pieces);
        let mut de = rmp_serde::Deserializer::new(reader);
        de.set_max_depth(MAX_DEPTH);
        Ok(World::deserialize(&mut de)?)
    }
}

/// How deep a checkpoint may nest: a stored object is at most `api::MAX_DEPTH` (100) levels
/// and the world's own types add a dozen. rmp-serde's own limit (1,024) lets damaged bytes
/// overflow the stack first (the browser's is 1 MB) instead of failing with an error.
const MAX_DEPTH: usize = 256;

/// How much of a checkpoint [`World::from_checkpoint_at`] copies at a time.
const PIECE: usize = 64 * 1024;

/// The bytes from `at` to `end`, read through `read_at`.
struct Pieces<'a> {
    read_at: &'a mut dyn FnMut(usize, &mut [u8]),
    at: usize,
    end: usize,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.end - self.at);
        (self.read_at)(self.at, &mut buf[..n]);
        self.at += n;
        Ok(n)
    }
}

/// `skip_serializing_if` for what only a checkpoint writes: true outside [`World::checkpoint`].
pub(crate) fn outside<T>(_: &T) -> bool {
    WRITTEN.with(|t| t.borrow().is_none())
}

/// `#[serde(with = "shared")]` for an `Arc<Value>` the world may hold in several places.
pub(crate) mod shared {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Arc<Value>, s: S) -> Result<S::Ok, S::Error> {
        Shared(v).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Value>, D::Error> {
        SharedSeed.deserialize(d)
    }
}

/// `#[serde(with = "shared_option")]` for an `Option<Arc<Value>>`.
pub(crate) mod shared_option {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<Arc<Value>>, s: S) -> Result<S::Ok, S::Error> {
        v.as_ref().map(Shared).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Arc<Value>>, D::Error> {
        Option::<In>::deserialize(d).map(|o| o.map(|In(v)| v))
    }
}

/// `#[serde(with = "shared_map")]` for an `imbl::OrdMap<K, Arc<Value>>`, written as a list of
/// pairs in key order.
pub(crate) mod shared_map {
    use super::*;
    use imbl::OrdMap;

    pub fn serialize<K: Serialize + Ord + Clone, S: Serializer>(
        m: &OrdMap<K, Arc<Value>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter().map(|(k, v)| (k, Shared(v))))
    }

    pub fn deserialize<'de, K, D>(d: D) -> Result<OrdMap<K, Arc<Value>>, D::Error>
    where
        K: Deserialize<'de> + Ord + Clone,
        D: Deserializer<'de>,
    {
        let pairs = Vec::<(K, In)>::deserialize(d)?;
        Ok(pairs.into_iter().map(|(k, In(v))| (k, v)).collect())
    }
}

/// An `Arc<Value>` read through the table, inside an `Option` or a pair where `with` cannot
/// reach.
struct In(Arc<Value>);

impl<'de> Deserialize<'de> for In {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SharedSeed.deserialize(d).map(In)
    }
}

struct Shared<'a>(&'a Arc<Value>);

impl Serialize for Shared<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let address = Arc::as_ptr(self.0) as usize;
        let seen = WRITTEN.with(|t| {
            let mut t = t.borrow_mut();
            // Outside `World::checkpoint` (none of the types using this is serialized there
            // today): the plain body.
            let table = t.as_mut()?;
            let next = table.len() as u32;
            Some(match table.get(&address) {
                Some(&n) => (n, true),
                None => {
                    table.insert(address, next);
                    (next, false)
                }
            })
        });
        match seen {
            None => self.0.serialize(s),
            Some((n, true)) => s.serialize_u32(n),
            Some((n, false)) => {
                let mut t = s.serialize_tuple(2)?;
                t.serialize_element(&n)?;
                t.serialize_element(&**self.0)?;
                t.end()
            }
        }
    }
}

struct SharedSeed;

impl<'de> DeserializeSeed<'de> for SharedSeed {
    type Value = Arc<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arc<Value>, D::Error> {
        d.deserialize_any(SharedVisitor)
    }
}

struct SharedVisitor;

impl<'de> Visitor<'de> for SharedVisitor {
    type Value = Arc<Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object version: [number, body] or a number met before")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Arc<Value>, E> {
        READ.with(|t| {
            let t = t.borrow();
            let table = t
                .as_ref()
                .ok_or_else(|| E::custom("a shared version outside a checkpoint"))?;
            usize::try_from(n)
                .ok()
                .and_then(|i| table.get(i))
                .cloned()
                .ok_or_else(|| E::custom(format!("object version {n} read before its body")))
        })
    }

    /// A plain body, as [`Shared`] writes one outside a checkpoint.
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Arc<Value>, A::Error> {
        Exact.visit_map(map).map(Arc::new)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Arc<Value>, A::Error> {
        let n: u64 = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let mut body = seq
            .next_element_seed(Exact)?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        // Stored as `ApiServer::persist` stores a version: each level's keys an array shared
        // with every other level of the same keys (`json::Map::compact`), and so searched by
        // their heads. Read by inserts, every object of the large starter kept keys of its own.
        body.compact();
        let v = Arc::new(body);
        READ.with(|t| {
            let mut t = t.borrow_mut();
            let table = t
                .as_mut()
                .ok_or_else(|| de::Error::custom("a shared version outside a checkpoint"))?;
            if n != table.len() as u64 {
                return Err(de::Error::custom(format!(
                    "object version {n} out of order (expected {})",
                    table.len()
                )));
            }
            table.push(Arc::clone(&v));
            Ok(())
        })?;
        Ok(v)
    }
}

/// A `Value` read with every object and array at its length. `Value`'s own reader (as
/// serde_json's) grows them by inserts, which leaves up to half of each one's room unused: read back that way, the
/// large starter's world took 87.5 MB live against 79.9 MB replayed (BENCHMARKS.md, sessions
/// 19 and 23). MessagePack states each length before the members, but damaged bytes can state
/// any length at every level of nesting, so only `ROOM` members are reserved before they are
/// read: nearly every map of an object is smaller than that (a larger one grows by inserts as
/// `Value`'s would), and a longer array is cut to its length once read.
struct Exact;

/// The most members a stated length reserves room for before they are read: at most 64 a
/// level, and at most [`MAX_DEPTH`] levels (under 2 MB for any bytes).
const ROOM: usize = 64;

impl<'de> DeserializeSeed<'de> for Exact {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Exact {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        Ok(crate::json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.into()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s.into()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Exact.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(ROOM));
        while let Some(item) = seq.next_element_seed(Exact)? {
            items.push(item);
        }
        if items.len() > ROOM {
            items.shrink_to_fit();
        }
        Ok(Value::Array(items.into()))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = crate::json::Map::with_capacity(map.size_hint().unwrap_or(0).min(ROOM));
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Exact)?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::scenario::ScenarioRun;
    use crate::view::session::{perform, replay, SessionAction, Starter};

    /// Steps a scenario takes at most here: every scenario file settles or reaches its end
    /// well within it, and both runs of a pair stop at the same place.
    const MAX_STEPS: usize = 4_000;

    fn scenarios() -> Vec<(String, String)> {
        let mut out = Vec::new();
        for dir in ["../../tests/scenarios", "../../tests/fixtures/scenarios"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            for entry in std::fs::read_dir(&dir).expect("the scenarios directory") {
                let path = entry.expect("a directory entry").path();
                if path.extension().is_some_and(|e| e == "yaml") {
                    let text = std::fs::read_to_string(&path).expect("a scenario file");
                    out.push((path.display().to_string(), text));
                }
            }
        }
        out.sort();
        out
    }

    fn read_back(world: &World) -> World {
        World::from_checkpoint(&world.checkpoint()).expect("a checkpoint reads back")
    }

    /// Steps `run` to its end (or [`MAX_STEPS`]), replacing its world by its checkpoint's
    /// read-back copy after `swap_at` steps; answers the steps taken.
    fn run_to_end(run: &mut ScenarioRun, swap_at: Option<usize>) -> usize {
        let mut steps = 0;
        while steps < MAX_STEPS {
            if Some(steps) == swap_at {
                let copy = read_back(run.world());
                run.replace_world(copy);
            }
            if !run.step() {
                break;
            }
            steps += 1;
        }
        steps
    }

    /// Every scenario, read back from a checkpoint halfway and at a quarter, goes on exactly
    /// as without: the same trace, the same run records, and the same checkpoint at the end.
    #[test]
    fn every_scenario_continues_from_its_checkpoint_as_without() {
        for (path, text) in scenarios() {
            let scenario = Scenario::load(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
            let mut plain = ScenarioRun::new(&scenario, None).expect("the scenario starts");
            let total = run_to_end(&mut plain, None);
            let want = plain.world().checkpoint();
            for swap_at in [total / 4, total / 2] {
                let mut resumed = ScenarioRun::new(&scenario, None).expect("the scenario starts");
                assert_eq!(run_to_end(&mut resumed, Some(swap_at)), total, "{path}");
                assert_eq!(resumed.world().trace(), plain.world().trace(), "{path}");
                assert_eq!(resumed.events(), plain.events(), "{path}");
                assert_eq!(resumed.audit(), plain.audit(), "{path}");
                assert!(
                    resumed.world().checkpoint() == want,
                    "{path}: checkpoints differ"
                );
            }
        }
    }

    /// A checkpoint read back writes the same checkpoint, and keeps one copy of each shared
    /// object version: the store's, the mirror's and every informer's are one allocation.
    #[test]
    fn a_read_back_world_writes_the_same_checkpoint_and_shares_its_versions() {
        let actions = Starter::Small.actions();
        let world = replay(Starter::Small, 1, &actions, |_, _| {});
        let bytes = world.checkpoint();
        let copy = World::from_checkpoint(&bytes).expect("reads back");
        assert!(copy.checkpoint() == bytes);
        let pods: Vec<_> = copy
            .objects_of(&crate::controllers::util::pods(), None)
            .collect();
        assert_eq!(pods.len(), 3);
        for (key, mirrored) in pods {
            let stored = copy.api().get(key).expect("the store holds the Pod");
            assert!(
                std::ptr::eq(stored, mirrored.as_ref()),
                "{key:?}: the store's is the mirror's"
            );
            let mut holders = 0;
            for slot in copy.slots.values() {
                if let Some(held) = slot.informer.get(key) {
                    assert!(
                        Arc::ptr_eq(held, mirrored),
                        "{key:?}: an informer's own copy"
                    );
                    holders += 1;
                }
            }
            assert!(holders >= 2, "{key:?} is in {holders} informers");
        }
    }

    /// Read a piece at a time from elsewhere, a checkpoint gives the same world, and no piece
    /// asked for is larger than [`PIECE`] (the page's copy is never made whole in wasm).
    #[test]
    fn a_checkpoint_read_in_pieces_is_the_same_world() {
        let world = replay(Starter::Small, 1, &Starter::Small.actions(), |_, _| {});
        let bytes = world.checkpoint();
        assert!(bytes.len() > 2 * PIECE, "{} bytes", bytes.len());
        let mut largest = 0;
        let mut read = 0;
        let copy = World::from_checkpoint_at(bytes.len(), &mut |at, buf| {
            largest = largest.max(buf.len());
            read += buf.len();
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
        })
        .expect("reads back");
        assert!(copy.checkpoint() == bytes);
        assert!(largest <= PIECE, "a piece of {largest} bytes");
        // The header, then the world twice: once for its digest, once to decode it.
        assert!(read < 2 * bytes.len() + 400, "{read} bytes read");
    }

    /// The playground's session: a checkpoint after any action, read back, gives the same
    /// world after the rest as the session without it.
    #[test]
    fn a_session_continues_from_a_checkpoint_after_any_action() {
        let mut actions = Starter::Small.actions();
        let patch = crate::json::json!({"spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.28"}]}}}});
        actions.push(SessionAction::apply(crate::engine::script::patch_as(
            "alice",
            crate::controllers::util::deployments(),
            "default",
            "web",
            patch,
        )));
        actions.extend([
            SessionAction::Step,
            SessionAction::NextEvent,
            SessionAction::Step,
        ]);
        actions.push(SessionAction::RunUntilConverged);
        let want = replay(Starter::Small, 7, &actions, |_, _| {});
        for cut in 0..=actions.len() {
            let first = replay(Starter::Small, 7, &actions[..cut], |_, _| {});
            let mut world = read_back(&first);
            for a in &actions[cut..] {
                perform(&mut world, a);
            }
            assert_eq!(world.trace(), want.trace(), "cut after {cut} actions");
            assert!(world.checkpoint() == want.checkpoint(), "cut after {cut}");
        }
    }

    #[test]
    fn another_format_or_build_or_damage_is_refused_with_a_reason() {
        let world = replay(Starter::Small, 1, &Starter::Small.actions(), |_, _| {});
        let bytes = world.checkpoint();
        let refused = |b: &[u8]| World::from_checkpoint(b).unwrap_err().to_string();
        let mut other = bytes.clone();
        other[8] = 0x7f;
        assert_eq!(
            refused(&other),
            format!("checkpoint format 127, this build reads format {FORMAT}")
        );
        let mut other = bytes.clone();
        other[13] = b'9';
        assert!(refused(&other).starts_with("checkpoint written by converge 9"));
        assert_eq!(refused(b"{\"world\": 1}"), "not a converge checkpoint");
        assert_eq!(refused(&bytes[..10]), "not a converge checkpoint");
        // Truncated, or one byte changed anywhere after the header: the digest tells.
        let header = bytes.len() - world_bytes(&bytes).len();
        assert!(refused(&bytes[..bytes.len() - 1]).starts_with("checkpoint damaged: "));
        let step = (bytes.len() - header) / 97;
        for at in (header..bytes.len()).step_by(step.max(1)) {
            let mut other = bytes.clone();
            other[at] ^= 0x20;
            assert!(
                refused(&other).starts_with("checkpoint damaged: "),
                "byte {at} changed"
            );
        }
        // The digest's own bytes.
        let mut other = bytes.clone();
        other[header - 1] ^= 1;
        assert!(refused(&other).starts_with("checkpoint damaged: "));
    }

    fn world_bytes(bytes: &[u8]) -> &[u8] {
        split_header(bytes).expect("a header").world
    }

    /// Bytes that pass the digest but are not a world (written by hand here) get a decoding
    /// error, not a panic.
    #[test]
    fn undecodable_bytes_behind_a_good_header_are_refused() {
        for world in [&b"\x93\x01\x02"[..], b"", b"\xc1", b"\x81\xa3now\xa1x"] {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&FORMAT.to_le_bytes());
            bytes.push(VERSION.len() as u8);
            bytes.extend_from_slice(VERSION.as_bytes());
            bytes.extend_from_slice(&digest(world).to_le_bytes());
            bytes.extend_from_slice(world);
            let err = World::from_checkpoint(&bytes).unwrap_err().to_string();
            assert!(err.starts_with("checkpoint unreadable: "), "{err}");
        }
    }

    #[test]
    fn values_are_read_back_as_written_and_lengths_are_not_trusted_past_the_room() {
        let value = crate::json::json!({
            "z": {"b": [1, -2, 18446744073709551615_u64, 0.5, -1e300, null, true, false]},
            "a": "\u{e9}t\u{e9} \u{1f680}",
            "m": {},
            "e": [],
            "n": {"y": {"x": [{"w": null}]}},
        });
        let mut bytes = Vec::new();
        value
            .serialize(&mut rmp_serde::Serializer::new(&mut bytes).with_struct_map())
            .unwrap();
        let read = Exact
            .deserialize(&mut rmp_serde::Deserializer::new(&bytes[..]))
            .unwrap();
        assert_eq!(read, value);
        // Member order too: it reaches every printed object.
        assert_eq!(read.to_string(), value.to_string());
        // Arrays and maps that claim 2^32 - 1 members, one inside the other as deep as the
        // reader goes, and hold nothing else: refused, with at most `ROOM` members reserved a
        // level on the way.
        for marker in [0xdd, 0xdf] {
            let claims: Vec<u8> = [marker, 0xff, 0xff, 0xff, 0xff].repeat(2_000);
            let mut de = rmp_serde::Deserializer::new(&claims[..]);
            de.set_max_depth(MAX_DEPTH);
            assert!(Exact.deserialize(&mut de).is_err());
        }
        // A long array is read whole and kept at its length.
        let long = Value::Array((0..1_000).map(Value::from).collect());
        let bytes = rmp_serde::to_vec(&long).unwrap();
        let read = Exact
            .deserialize(&mut rmp_serde::Deserializer::new(&bytes[..]))
            .unwrap();
        assert_eq!(read, long);
        assert_eq!(read.as_array().map(Vec::capacity), Some(1_000));
    }
}
