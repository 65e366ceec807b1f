//! Event recording: what a component reports about an object, and the broadcaster that turns
//! reports into `v1/Event` writes the way client-go's does.
//!
//! Two recorders exist in kube 1.32, and Converge has both:
//! - **core/v1** ([`EventApi::CoreV1`]), `tools/record`: the controllers and the kubelet. Each
//!   report goes through the `EventCorrelator` [events_cache.go]: the aggregator folds more than
//!   ten similar reports (same source, object, type and reason; another message) within ten
//!   minutes into one `(combined from similar events): ` event; the logger turns a repeat of an
//!   event it has seen into a PATCH of its `count` and `lastTimestamp`; the spam filter lets 25
//!   events per source and object through, then one per five minutes.
//! - **events.k8s.io/v1** ([`EventApi::EventsV1`]), `tools/events`: the scheduler. An event has an
//!   `eventTime`, an `action`, `reportingController`/`reportingInstance` and no `source`, `count`
//!   or first/last timestamps; an isomorphic repeat within six minutes becomes a `series` update.
//!
//! A controller reports with [`crate::runtime::Ctx::record`]; the engine hands the reports to the
//! component's [`EventBroadcaster`] after the reconcile, which answers the requests to send. In
//! kube the broadcaster writes from its own goroutine a moment later; in the simulation the writes
//! happen at the same instant, after the reconcile's own requests.

use crate::api::meta::Fields;
use crate::json::path;
use crate::json::{json, Value};
use compact_str::CompactString;
use imbl::OrdMap;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

use crate::api::{meta, ApiRequest, GroupResource, PatchType};
use crate::time::SimTime;

/// `Normal` or `Warning` (`v1.EventTypeNormal`, `v1.EventTypeWarning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    Normal,
    Warning,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// The object an event is about: `v1.ObjectReference` as `ref.GetReference` builds it
/// [client-go tools/reference/ref.go].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub resource_version: String,
    /// `spec.containers{web}` for a container's events; empty for the object itself.
    pub field_path: String,
}

impl ObjectRef {
    /// The reference to `obj`, whose kind and apiVersion are given (typed Go objects carry none;
    /// `GetReference` looks them up in the scheme).
    pub fn to(obj: &Value, api_version: &str, kind: &str) -> ObjectRef {
        ObjectRef {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: meta::namespace(obj).to_owned(),
            name: meta::name(obj).to_owned(),
            uid: meta::uid(obj).to_owned(),
            resource_version: meta::str_at(obj, path!("/metadata/resourceVersion")).to_owned(),
            field_path: String::new(),
        }
    }

    /// The same reference to one of the object's containers (`ref.GetPartialReference`).
    pub fn container(mut self, container: &str) -> ObjectRef {
        self.field_path = format!("spec.containers{{{container}}}");
        self
    }

    /// As JSON, fields in `v1.ObjectReference`'s order, empty ones omitted (`omitempty`).
    fn to_json(&self) -> Value {
        let mut m = crate::json::Map::new();
        for (k, v) in [
            ("kind", &self.kind),
            ("namespace", &self.namespace),
            ("name", &self.name),
            ("uid", &self.uid),
            ("apiVersion", &self.api_version),
            ("resourceVersion", &self.resource_version),
            ("fieldPath", &self.field_path),
        ] {
            if !v.is_empty() {
                m.insert(k.to_owned(), json!(v));
            }
        }
        Value::Object(m)
    }
}

/// One report: `recorder.Eventf(obj, type, reason, messageFmt, args...)`, or for the
/// events.k8s.io recorder `Eventf(regarding, related, type, reason, action, note, args...)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventNote {
    pub regarding: ObjectRef,
    pub event_type: EventType,
    pub reason: String,
    pub message: String,
    /// What the component did (`Scheduling`, `Binding`); only the events.k8s.io recorder sends it.
    pub action: String,
}

impl EventNote {
    pub fn new(regarding: ObjectRef, event_type: EventType, reason: &str, message: String) -> Self {
        EventNote {
            regarding,
            event_type,
            reason: reason.to_owned(),
            message,
            action: String::new(),
        }
    }

    /// The events.k8s.io recorder's `action`.
    pub fn action(mut self, action: &str) -> Self {
        self.action = action.to_owned();
        self
    }
}

/// Which recorder a component uses, with its identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventApi {
    /// `tools/record`: `source: {component, host}`, also sent as `reportingComponent` and
    /// `reportingInstance`.
    CoreV1 { component: String, host: String },
    /// `tools/events`: `reportingController` and `reportingInstance`.
    EventsV1 {
        controller: String,
        instance: String,
    },
}

/// `maxLruCacheEntries` [events_cache.go]: each cache of the correlator keeps this many keys.
const LRU_ENTRIES: usize = 4096;
/// `defaultAggregateMaxEvents`: similar events before they are combined.
const AGGREGATE_MAX_EVENTS: usize = 10;
/// `defaultAggregateIntervalInSeconds`: how long a run of similar events is remembered.
const AGGREGATE_INTERVAL_MS: u64 = 600_000;
/// The spam filter's bucket: `defaultSpamBurst` events, refilled at `defaultSpamQPS` (1/300 s).
const SPAM_BURST: u64 = 25;
const SPAM_REFILL_MS: u64 = 300_000;
/// The events.k8s.io recorder's isomorphic-event window (`finishTime` of a series: 6 minutes).
const SERIES_WINDOW_MS: u64 = 360_000;
/// The aggregate event's message prefix.
const COMBINED: &str = "(combined from similar events): ";

/// What the correlator's caches hold: one type, so the cache code is compiled once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Cached {
    Aggregate(AggregateRecord),
    Logged(Logged),
    Bucket(Bucket),
    /// Boxed: the largest of the four, and the one cache of a component that uses it (the
    /// scheduler's); unboxed, every entry of every kubelet's three caches took its size.
    Series(Box<SeriesEntry>),
}

/// A least-recently-used map of [`LRU_ENTRIES`] keys, as golang/groupcache's `lru.Cache` the
/// correlator is built on: a full cache forgets the key used longest ago.
///
/// The keys are the correlator's texts, about 170 bytes each, up to 4,096 of them in each of a
/// kubelet's three caches. A key is held as a 128-bit SipHash-1-3 digest of its text ([`LruKey`]):
/// kube's cache compares the texts, and two different texts would be taken for one only if
/// their digests were equal, which among the 4,096 keys of a full cache (keys of two caches
/// are never compared) has a chance of about 2^-105. Only a cache read in its keys' text order
/// (the events.k8s.io recorder's series, [`Lru::with_texts`]) keeps the texts too, in a map of
/// their own: the keys of the other caches, about 90,000 of them at 10,000 Pods, are 16 bytes
/// in each of the two maps. `by_tick` finds the key used longest ago without a scan, once the
/// cache has been full. A checkpoint writes the texts in text order, or the digests, with
/// ticks.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(from = "LruText", into = "LruText")]
struct Lru {
    entries: OrdMap<LruKey, (u64, Cached)>,
    /// Each key by the tick it was last used at (ticks are unique), made from `entries` when
    /// the cache first outgrows its cap and kept from then on. A cache that never fills never
    /// forgets a key by age: at 10,000 Pods no kubelet's cache fills, and this map was a
    /// fifth of their bytes and two of every put's four map writes.
    by_tick: Option<OrdMap<u64, LruKey>>,
    /// Each key's text, where the cache keeps them; else empty.
    texts: OrdMap<LruKey, Arc<str>>,
    tick: u64,
    /// Whether the cache keeps its keys' texts.
    keeps_texts: bool,
}

/// A key of [`Lru`]: its text's digest (which only orders the map; nothing reads it in its
/// order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LruKey(u64, u64);

/// Two SipHash-1-3 digests of the text (std's `DefaultHasher`, zero keys), after a different
/// first byte each: 128 bits, the same natively and in wasm. std does not promise the function
/// across releases; a checkpoint holds digests, and `a_key_digest_is_fixed` fails when a new
/// toolchain changes them (then `checkpoint::FORMAT` moves on).
fn digest(text: &str) -> (u64, u64) {
    use std::hash::{DefaultHasher, Hasher};
    let half = |first: u8| {
        let mut h = DefaultHasher::new();
        h.write_u8(first);
        h.write(text.as_bytes());
        h.finish()
    };
    (half(0), half(1))
}

/// [`Lru`] as checkpoints hold it: by text where it keeps texts, else by digest.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct LruText {
    entries: OrdMap<String, (u64, Cached)>,
    digests: OrdMap<(u64, u64), (u64, Cached)>,
    tick: u64,
    texts: bool,
}

impl From<LruText> for Lru {
    fn from(t: LruText) -> Lru {
        let mut lru = Lru {
            tick: t.tick,
            keeps_texts: t.texts,
            ..Lru::default()
        };
        let put = |lru: &mut Lru, key: LruKey, entry| {
            lru.entries.insert(key, entry);
        };
        for (text, entry) in t.entries {
            let key = Lru::key(&text);
            if lru.keeps_texts {
                lru.texts.insert(key, text.into());
            }
            put(&mut lru, key, entry);
        }
        for ((a, b), entry) in t.digests {
            put(&mut lru, LruKey(a, b), entry);
        }
        lru
    }
}

impl From<Lru> for LruText {
    fn from(lru: Lru) -> LruText {
        let mut t = LruText {
            tick: lru.tick,
            texts: lru.keeps_texts,
            ..LruText::default()
        };
        for (k, v) in lru.entries {
            match lru.texts.get(&k) {
                Some(text) => {
                    t.entries.insert(text.to_string(), v);
                }
                None => {
                    t.digests.insert((k.0, k.1), v);
                }
            }
        }
        t
    }
}

impl Lru {
    /// A cache whose keys keep their texts, for [`Lru::in_text_order`].
    fn with_texts() -> Lru {
        Lru {
            keeps_texts: true,
            ..Lru::default()
        }
    }

    /// The key for `text`.
    fn key(text: &str) -> LruKey {
        let (a, b) = digest(text);
        LruKey(a, b)
    }

    fn get(&mut self, key: &str) -> Option<Cached> {
        let key = Lru::key(key);
        let v = self.entries.get(&key)?.1.clone();
        self.touch(key, v.clone());
        Some(v)
    }

    fn remove(&mut self, key: &str) {
        self.forget(&Lru::key(key));
    }

    fn forget(&mut self, key: &LruKey) {
        if let Some((touched, _)) = self.entries.remove(key) {
            if let Some(by_tick) = &mut self.by_tick {
                by_tick.remove(&touched);
            }
            if self.keeps_texts {
                self.texts.remove(key);
            }
        }
    }

    fn put(&mut self, key: &str, v: Cached) {
        self.put_within(key, v, LRU_ENTRIES);
    }

    /// [`Lru::get`] of a key the caller puts back next ([`Lru::put_key`]): the same answer
    /// and the same tick taken, without the touch, which the put makes anyway (moving the key
    /// to the same place the touch would have, so what the cache holds afterwards is the
    /// same); and the key made once for both.
    fn get_for_put(&mut self, key: &LruKey) -> Option<Cached> {
        let v = self.entries.get(key)?.1.clone();
        self.tick += 1;
        Some(v)
    }

    /// [`Lru::put`] of a key already made, in a cache that keeps no texts.
    fn put_key(&mut self, key: LruKey, v: Cached) {
        assert!(!self.keeps_texts, "a cache that keeps texts is put by text");
        self.put_key_within(key, v, LRU_ENTRIES);
    }

    /// [`Lru::put`] into a cache of `cap` keys.
    fn put_within(&mut self, text: &str, v: Cached, cap: usize) {
        let key = Lru::key(text);
        if self.keeps_texts && !self.texts.contains_key(&key) {
            self.texts.insert(key, text.into());
        }
        self.put_key_within(key, v, cap);
    }

    fn put_key_within(&mut self, key: LruKey, v: Cached, cap: usize) {
        self.touch(key, v);
        if self.entries.len() > cap {
            let entries = &self.entries;
            let by_tick = self
                .by_tick
                .get_or_insert_with(|| entries.iter().map(|(k, (t, _))| (*t, *k)).collect());
            if let Some((_, oldest)) = by_tick.get_min().cloned() {
                self.forget(&oldest);
            }
        }
    }

    /// Stores `v` under `key` as used now.
    fn touch(&mut self, key: LruKey, v: Cached) {
        self.tick += 1;
        let before = self.entries.insert(key, (self.tick, v));
        if let Some(by_tick) = &mut self.by_tick {
            if let Some((touched, _)) = before {
                by_tick.remove(&touched);
            }
            by_tick.insert(self.tick, key);
        }
    }

    /// The entries in their texts' order, as the correlator's scans meet them.
    fn in_text_order(&self) -> Vec<(&str, &Cached)> {
        debug_assert!(
            self.keeps_texts,
            "a cache read in text order keeps its texts"
        );
        let mut all: Vec<(&str, &Cached)> = self
            .texts
            .iter()
            .filter_map(|(k, text)| Some((&**text, &self.entries.get(k)?.1)))
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        all
    }
}

/// The aggregator's record of one run of similar events: the messages seen, and when the run
/// was last extended. The messages are kept sorted; they never number more than
/// `AGGREGATE_MAX_EVENTS`, so a small vector (one allocation) holds them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct AggregateRecord {
    messages: Vec<String>,
    last: SimTime,
}

/// What the logger remembers of an event it wrote (`eventLog`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Logged {
    count: i64,
    /// Inline (a timestamp is 20 bytes), as is a name of up to 24.
    first_timestamp: CompactString,
    name: CompactString,
}

/// The spam filter's bucket for one source and object: credit in milliseconds of refill, one
/// event costing [`SPAM_REFILL_MS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Bucket {
    credit_ms: u64,
    at: SimTime,
}

/// An events.k8s.io event the recorder wrote (`eventCache`), for series updates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct SeriesEntry {
    /// The Event as first created, to create again if a series patch finds it gone.
    #[serde(with = "crate::engine::checkpoint::shared")]
    body: std::sync::Arc<Value>,
    namespace: String,
    name: String,
    event_time: SimTime,
    /// `series.count` in memory (0 while the event has no series).
    count: i64,
    /// The count the server last saw.
    sent: i64,
    last_observed: SimTime,
}

/// One event write the broadcaster wants sent.
#[derive(Clone, Debug)]
pub struct EventWrite {
    pub request: ApiRequest,
    /// What to send instead when the request answers NotFound (`recordEvent` re-creates a
    /// patched event that is gone).
    pub create_if_missing: Option<ApiRequest>,
    /// The logger's key for [`EventBroadcaster::written`].
    pub key: String,
}

/// One component's event broadcaster and correlator state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EventBroadcaster {
    api: EventApi,
    principal: String,
    aggregate: Lru,
    logged: Lru,
    spam: Lru,
    series: Lru,
    /// The last `finishSeries` tick handled (multiples of [`SERIES_WINDOW_MS`] from t=0).
    finished_tick: u64,
    /// The last event-name timestamp used, in Unix nanoseconds: the simulated clock moves in
    /// milliseconds, so events in the same millisecond take successive nanoseconds (kube's
    /// `metav1.Now()` differs between them).
    last_nanos: i64,
    /// Parts of the last Event built, for the next to share (not state: a checkpoint leaves
    /// them out).
    #[serde(skip)]
    parts: SharedParts,
}

/// The `involvedObject` (or `regarding`) of the last Event built, with the reference it came
/// from, and the `source` member. A component reports about one object several times in a row
/// (a kubelet's Pulling, Pulled, Created and Started), and every report has the same source:
/// the Events then hold one copy of each, where building them anew kept one per Event (about a
/// third of a large world's memory was Events).
#[derive(Clone, Debug, Default)]
struct SharedParts {
    reference: Option<(ObjectRef, Value)>,
    source: Option<Value>,
    /// The last events.k8s.io Event kept for a series, whose keys the next one's share.
    series_body: Option<Value>,
}

impl SharedParts {
    /// `r` as JSON, shared with the last Event's when `r` is the same reference.
    fn reference(&mut self, r: &ObjectRef) -> Value {
        match &self.reference {
            Some((last, json)) if last == r => json.clone(),
            _ => {
                // Stored now, with the last reference's keys: the Events that hold it share
                // it (a level not yet stored would be stored as a copy for each).
                let mut json = r.to_json();
                json.compact_like_last(self.reference.as_ref().map(|(_, last)| last));
                self.reference = Some((r.clone(), json.clone()));
                json
            }
        }
    }

    /// The core/v1 `source` of a component on a host (built once, and stored, so every Event
    /// of the broadcaster shares it).
    fn source(&mut self, component: &str, host: &str) -> Value {
        self.source
            .get_or_insert_with(|| {
                let mut source = crate::json::Map::new();
                source.insert("component", json!(component));
                if !host.is_empty() {
                    source.insert("host", json!(host));
                }
                let mut source = Value::Object(source);
                source.compact();
                source
            })
            .clone()
    }
}

/// `metav1.MicroTime` as it marshals: `2025-01-01T00:00:05.123000Z`.
pub fn micro_time(t: SimTime) -> String {
    let ms = t.unix_ms();
    let base = crate::time::format_unix_seconds(ms.div_euclid(1000));
    let frac = ms.rem_euclid(1000) * 1000;
    format!("{}.{frac:06}Z", base.trim_end_matches('Z'))
}

/// The stored namespace of an event about `r`: the object's, or `default` for cluster-scoped
/// objects (`makeEvent`).
fn event_namespace(r: &ObjectRef) -> String {
    if r.namespace.is_empty() {
        "default".to_owned()
    } else {
        r.namespace.clone()
    }
}

impl EventBroadcaster {
    pub fn new(api: EventApi, principal: &str) -> Self {
        EventBroadcaster {
            api,
            principal: principal.to_owned(),
            aggregate: Lru::default(),
            logged: Lru::default(),
            spam: Lru::default(),
            series: Lru::with_texts(),
            finished_tick: 0,
            last_nanos: 0,
            parts: SharedParts::default(),
        }
    }

    /// Whether a report that caused no write was dropped (the core/v1 spam filter) rather than
    /// counted in memory (an events.k8s.io series).
    pub fn drops_when_silent(&self) -> bool {
        matches!(self.api, EventApi::CoreV1 { .. })
    }

    /// A component restart: the caches are memory only, so the same report starts a new event.
    pub fn reset(&mut self) {
        *self = EventBroadcaster::new(self.api.clone(), &self.principal);
    }

    fn name_for(&mut self, object: &str, now: SimTime) -> String {
        let nanos = now
            .unix_ms()
            .saturating_mul(1_000_000)
            .max(self.last_nanos + 1);
        self.last_nanos = nanos;
        format!("{object}.{nanos:x}")
    }

    /// The writes for one report: none when the spam filter drops it or the events.k8s.io
    /// recorder only counts it in memory.
    pub fn write(&mut self, now: SimTime, note: &EventNote) -> Vec<EventWrite> {
        match self.api.clone() {
            EventApi::CoreV1 { component, host } => self
                .write_core(now, note, &component, &host)
                .into_iter()
                .collect(),
            EventApi::EventsV1 {
                controller,
                instance,
            } => {
                let mut writes = self.finish_series(now);
                writes.extend(self.write_events_v1(now, note, &controller, &instance));
                writes
            }
        }
    }

    /// `EventCorrelator.EventCorrelate`: aggregate, observe, then filter.
    fn write_core(
        &mut self,
        now: SimTime,
        note: &EventNote,
        component: &str,
        host: &str,
    ) -> Option<EventWrite> {
        let r = &note.regarding;
        let ts = now.rfc3339();
        let source = [component, host, &r.kind, &r.namespace, &r.name];
        // EventAggregatorByReasonFunc: the key without the message; the message is the local key.
        let aggregate_key = [
            &source[..],
            &[
                &r.uid,
                &r.api_version,
                note.event_type.as_str(),
                &note.reason,
                component,
                host,
            ],
        ]
        .concat()
        .join("");
        // Each cache's key is read and then put back: made once for both.
        let aggregate_lru = Lru::key(&aggregate_key);
        let mut record = match self.aggregate.get_for_put(&aggregate_lru) {
            Some(Cached::Aggregate(rec))
                if now.as_ms().saturating_sub(rec.last.as_ms()) <= AGGREGATE_INTERVAL_MS =>
            {
                rec
            }
            _ => AggregateRecord {
                messages: Vec::new(),
                last: now,
            },
        };
        if let Err(at) = record.messages.binary_search(&note.message) {
            record.messages.insert(at, note.message.clone());
        }
        record.last = now;
        let combined = record.messages.len() >= AGGREGATE_MAX_EVENTS;
        if combined {
            // `localKeys.PopAny()`: the set never grows past the threshold, so a message seen
            // before still reaches its own Event. kube pops an arbitrary one; Converge the
            // first in string order, to stay deterministic.
            if !record.messages.is_empty() {
                record.messages.remove(0);
            }
        }
        // Kept at its length: one message is the common record, and the room a push left
        // (four) was three quarters of its bytes.
        record.messages.shrink_to_fit();
        self.aggregate
            .put_key(aggregate_lru, Cached::Aggregate(record));
        // The combined event carries no reportingComponent/Instance, and is logged under the
        // aggregate key; any other event under `getEventKey`.
        let (message, log_key, reporting) = if combined {
            (
                format!("{COMBINED}{}", note.message),
                aggregate_key,
                ("", ""),
            )
        } else {
            let key = [
                &source[..],
                &[
                    &r.field_path,
                    &r.uid,
                    &r.api_version,
                    note.event_type.as_str(),
                    &note.reason,
                    &note.message,
                ],
            ]
            .concat()
            .join("");
            (note.message.clone(), key, (component, host))
        };
        // eventObserve: a repeat takes the logged event's name, first time and count + 1.
        let log_lru = Lru::key(&log_key);
        let seen = match self.logged.get_for_put(&log_lru) {
            Some(Cached::Logged(l)) => Some(l),
            _ => None,
        };
        let count = seen.as_ref().map_or(1, |s| s.count + 1);
        let namespace = event_namespace(r);
        let name = match &seen {
            Some(s) => s.name.to_string(),
            None => self.name_for(&r.name, now),
        };
        let first = seen
            .as_ref()
            .map_or_else(|| ts.clone(), |s| s.first_timestamp.to_string());
        self.logged.put_key(
            log_lru,
            Cached::Logged(Logged {
                count,
                first_timestamp: first.as_str().into(),
                name: name.as_str().into(),
            }),
        );
        // EventSourceObjectSpamFilter: 25 per source, object and type, then one per 5 minutes;
        // it runs last, so a dropped repeat still counted in the logger.
        let spam_key = [
            &source[..],
            &[&r.uid, &r.api_version, note.event_type.as_str()],
        ]
        .concat()
        .join("");
        let full = SPAM_BURST * SPAM_REFILL_MS;
        let spam_lru = Lru::key(&spam_key);
        let mut bucket = match self.spam.get_for_put(&spam_lru) {
            Some(Cached::Bucket(b)) => b,
            _ => Bucket {
                credit_ms: full,
                at: now,
            },
        };
        bucket.credit_ms =
            (bucket.credit_ms + now.as_ms().saturating_sub(bucket.at.as_ms())).min(full);
        bucket.at = now;
        let allowed = bucket.credit_ms >= SPAM_REFILL_MS;
        if allowed {
            bucket.credit_ms -= SPAM_REFILL_MS;
        }
        self.spam.put_key(spam_lru, Cached::Bucket(bucket));
        if !allowed {
            return None;
        }
        // Values built here are put in place after the shape: `json!` would copy each through
        // its serializer.
        let mut body = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": null,
            "reason": note.reason,
            "message": message,
            "source": null,
            "firstTimestamp": first,
            "lastTimestamp": ts,
            "count": count,
            "type": note.event_type.as_str(),
            "eventTime": null,
            // No omitempty on either: a combined Event has them empty.
            "reportingComponent": reporting.0,
            "reportingInstance": reporting.1,
        });
        body["involvedObject"] = self.parts.reference(r);
        body["source"] = self.parts.source(component, host);
        let create = ApiRequest::create(&self.principal, GroupResource::events(), &namespace, body);
        if count == 1 {
            return Some(EventWrite {
                request: create,
                create_if_missing: None,
                key: log_key,
            });
        }
        // The logger's two-way strategic merge patch: count, lastTimestamp and message.
        let patch = json!({"count": count, "lastTimestamp": ts, "message": message});
        Some(EventWrite {
            request: ApiRequest::patch(
                &self.principal,
                GroupResource::events(),
                &namespace,
                &name,
                PatchType::Strategic,
                patch,
            ),
            create_if_missing: Some(create),
            key: log_key,
        })
    }

    /// tools/events `recordToSink`: a new event; the second isomorphic report (same object,
    /// type, reason, action and reporter, any note) patches in a `series` of 2; later ones are
    /// counted in memory until `finishSeries`.
    fn write_events_v1(
        &mut self,
        now: SimTime,
        note: &EventNote,
        controller: &str,
        instance: &str,
    ) -> Option<EventWrite> {
        let r = &note.regarding;
        let key = [
            note.event_type.as_str(),
            &note.action,
            &note.reason,
            controller,
            instance,
            &r.kind,
            &r.namespace,
            &r.name,
            &r.uid,
            &r.api_version,
            &r.resource_version,
            &r.field_path,
        ]
        .join("\u{0}");
        if let Some(Cached::Series(mut seen)) = self.series.get(&key) {
            seen.last_observed = now;
            if seen.count > 0 {
                seen.count += 1;
                self.series.put(&key, Cached::Series(seen));
                return None;
            }
            seen.count = 2;
            seen.sent = 2;
            let write = self.series_write(&seen, key.clone());
            self.series.put(&key, Cached::Series(seen));
            return Some(write);
        }
        let namespace = event_namespace(r);
        let name = self.name_for(&r.name, now);
        let mut body = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": null,
            "reason": note.reason,
            "message": note.message,
            "source": {},
            "firstTimestamp": null,
            "lastTimestamp": null,
            "type": note.event_type.as_str(),
            "eventTime": micro_time(now),
            "action": note.action,
            "reportingComponent": controller,
            "reportingInstance": instance,
        });
        body["involvedObject"] = self.parts.reference(r);
        // The series keeps the Event as built, so the server's copy of it is not the only one:
        // kept compact, as a stored object is, with the last one's keys.
        body.compact_like_last(self.parts.series_body.as_ref());
        self.parts.series_body = Some(body.clone());
        self.series.put(
            &key,
            Cached::Series(Box::new(SeriesEntry {
                body: std::sync::Arc::new(body.clone()),
                namespace: namespace.clone(),
                name,
                event_time: now,
                count: 0,
                sent: 0,
                last_observed: now,
            })),
        );
        Some(EventWrite {
            request: ApiRequest::create(&self.principal, GroupResource::events(), &namespace, body),
            create_if_missing: None,
            key,
        })
    }

    /// The series patch of `seen`'s count and last observation; if the Event is gone, it is
    /// created again with the series (`recordEvent`'s 404 path).
    fn series_write(&self, seen: &SeriesEntry, key: String) -> EventWrite {
        let patch = series_patch(seen.count, seen.last_observed);
        let mut again = seen.body.as_ref().clone();
        again["series"] = patch.member("series").clone();
        EventWrite {
            request: ApiRequest::patch(
                &self.principal,
                GroupResource::events(),
                &seen.namespace,
                &seen.name,
                PatchType::Strategic,
                patch,
            ),
            create_if_missing: Some(ApiRequest::create(
                &self.principal,
                GroupResource::events(),
                &seen.namespace,
                again,
            )),
            key,
        }
    }

    /// `finishSeries`, every 6 minutes from the start: a series last observed over 6 minutes
    /// ago is patched one last time with its count and forgotten; an event without a series is
    /// forgotten 6 minutes after its eventTime. The simulation runs the ticks that have passed
    /// when the recorder is next used, so the final patch can come later than kube's.
    fn finish_series(&mut self, now: SimTime) -> Vec<EventWrite> {
        let mut writes = Vec::new();
        while (self.finished_tick + 1) * SERIES_WINDOW_MS <= now.as_ms() {
            self.finished_tick += 1;
            let tick = self.finished_tick * SERIES_WINDOW_MS;
            let done: Vec<(String, SeriesEntry)> = self
                .series
                .in_text_order()
                .into_iter()
                .filter_map(|(k, e)| match e {
                    Cached::Series(e) => Some((k.to_owned(), (**e).clone())),
                    _ => None,
                })
                .filter(|(_, e)| {
                    let since = if e.count > 0 {
                        e.last_observed
                    } else {
                        e.event_time
                    };
                    tick.saturating_sub(since.as_ms()) > SERIES_WINDOW_MS
                })
                .collect();
            for (key, e) in done {
                if e.count > e.sent {
                    writes.push(self.series_write(&e, key.clone()));
                }
                self.series.remove(&key);
            }
        }
        writes
    }

    /// `EventCorrelator.UpdateState`: the logger remembers the event as the server stored it.
    pub fn written(&mut self, key: &str, stored: &Value) {
        if let EventApi::CoreV1 { .. } = self.api {
            self.logged.put(
                key,
                Cached::Logged(Logged {
                    count: stored.field("count").and_then(Value::as_i64).unwrap_or(1),
                    first_timestamp: meta::str_at(stored, path!("/firstTimestamp")).into(),
                    name: meta::name(stored).into(),
                }),
            );
        }
    }
}

fn series_patch(count: i64, observed: SimTime) -> Value {
    json!({"series": {"count": count, "lastObservedTime": micro_time(observed)}})
}

#[cfg(test)]
mod tests {
    //! Each case is worked from client-go v0.32 `tools/record/events_cache.go` and
    //! `tools/events/event_broadcaster.go`.
    use super::*;
    use crate::api::RequestBody;

    /// groupcache's `lru.Cache` done the plain way: a list in use order, the oldest first.
    #[derive(Default)]
    struct Model(Vec<(String, Cached)>);

    impl Model {
        fn get(&mut self, key: &str) -> Option<Cached> {
            let at = self.0.iter().position(|(k, _)| k == key)?;
            let entry = self.0.remove(at);
            self.0.push(entry.clone());
            Some(entry.1)
        }
        fn put(&mut self, key: &str, v: Cached, cap: usize) {
            self.0.retain(|(k, _)| k != key);
            self.0.push((key.to_owned(), v));
            if self.0.len() > cap {
                self.0.remove(0);
            }
        }
        fn remove(&mut self, key: &str) {
            self.0.retain(|(k, _)| k != key);
        }
    }

    /// Each key by the tick it was last used at, from the entries themselves.
    fn ticks(lru: &Lru) -> OrdMap<u64, LruKey> {
        lru.entries.iter().map(|(k, (t, _))| (*t, *k)).collect()
    }

    fn bucket(n: u64) -> Cached {
        Cached::Bucket(Bucket {
            credit_ms: n,
            at: SimTime::ZERO,
        })
    }

    /// A checkpoint holds digests: they must be the same in every build that reads it, native
    /// or wasm. A toolchain whose `DefaultHasher` answers otherwise fails here: then
    /// `checkpoint::FORMAT` moves on (older checkpoints are refused and replayed) and these
    /// values are the new ones.
    #[test]
    fn a_key_digest_is_fixed() {
        assert_eq!(digest(""), (7541581120933061747, 4952851536318644461));
        assert_eq!(
            digest("kubeletnode-1Poddefaultweb-0"),
            (4043596344911072467, 14250992470671737182)
        );
    }

    proptest::proptest! {
        /// The cache keeps, finds and forgets what the plain list does, across a checkpoint's
        /// round trip, and the checkpoint writes its texts in order; by texts or by digests.
        #[test]
        fn the_lru_answers_as_a_list_in_use_order(
            ops in proptest::collection::vec((0u8..3, 0usize..40), 1..400),
            cut in 0usize..400,
            texts in proptest::bool::ANY,
        ) {
            let lru = if texts { Lru::with_texts() } else { Lru::default() };
            let (mut lru, mut model) = (lru, Model::default());
            let key = |i: usize| format!("kubeletnode-1Poddefaultweb-{i}");
            for (n, (op, i)) in ops.into_iter().enumerate() {
                if n == cut {
                    let bytes = rmp_serde::to_vec_named(&lru).expect("writes");
                    let text: LruText = rmp_serde::from_slice(&bytes).expect("reads");
                    let keys: Vec<&String> = text.entries.keys().collect();
                    proptest::prop_assert!(keys.windows(2).all(|w| w[0] < w[1]));
                    let written = if texts { text.entries.len() } else { text.digests.len() };
                    proptest::prop_assert_eq!(written, lru.entries.len());
                    lru = rmp_serde::from_slice(&bytes).expect("reads");
                }
                match op {
                    0 => proptest::prop_assert_eq!(lru.get(&key(i)), model.get(&key(i))),
                    1 => {
                        lru.put_within(&key(i), bucket(n as u64), 16);
                        model.put(&key(i), bucket(n as u64), 16);
                    }
                    _ => {
                        lru.remove(&key(i));
                        model.remove(&key(i));
                    }
                }
                proptest::prop_assert_eq!(lru.entries.len(), model.0.len());
                if let Some(by_tick) = &lru.by_tick {
                    proptest::prop_assert_eq!(by_tick, &ticks(&lru));
                }
            }
            let order: Vec<LruKey> = ticks(&lru).values().copied().collect();
            let want: Vec<LruKey> = model.0.iter().map(|(k, _)| Lru::key(k)).collect();
            proptest::prop_assert_eq!(order, want);
        }
    }

    proptest::proptest! {
        /// A read and then a put of the same key, the correlator's way (`get_for_put`,
        /// `put_key`), answers and leaves the cache as `get` and then `put` do: the same
        /// values, ticks, order and checkpoint.
        #[test]
        fn a_read_then_put_leaves_the_cache_as_get_then_put(
            ops in proptest::collection::vec((proptest::bool::ANY, 0usize..40), 1..300),
        ) {
            let (mut plain, mut paired) = (Lru::default(), Lru::default());
            let key = |i: usize| format!("kubeletnode-1Poddefaultweb-{i}");
            for (n, (read_first, i)) in ops.into_iter().enumerate() {
                let k = key(i);
                if read_first {
                    let lru_key = Lru::key(&k);
                    proptest::prop_assert_eq!(plain.get(&k), paired.get_for_put(&lru_key));
                    plain.put_within(&k, bucket(n as u64), 16);
                    paired.put_key_within(lru_key, bucket(n as u64), 16);
                } else {
                    plain.put_within(&k, bucket(n as u64), 16);
                    paired.put_key_within(Lru::key(&k), bucket(n as u64), 16);
                }
                proptest::prop_assert_eq!(plain.tick, paired.tick);
                proptest::prop_assert_eq!(ticks(&plain), ticks(&paired));
                proptest::prop_assert_eq!(&plain.by_tick, &paired.by_tick);
            }
            proptest::prop_assert_eq!(
                rmp_serde::to_vec_named(&plain).expect("writes"),
                rmp_serde::to_vec_named(&paired).expect("writes")
            );
        }
    }

    fn kubelet() -> EventBroadcaster {
        EventBroadcaster::new(
            EventApi::CoreV1 {
                component: "kubelet".into(),
                host: "node-1".into(),
            },
            "system:node:node-1",
        )
    }

    fn pod() -> ObjectRef {
        ObjectRef::to(
            &json!({"metadata": {"name": "web-1", "namespace": "default", "uid": "u1",
                "resourceVersion": "7"}}),
            "v1",
            "Pod",
        )
    }

    fn note(reason: &str, message: &str) -> EventNote {
        EventNote::new(
            pod().container("app"),
            EventType::Warning,
            reason,
            message.into(),
        )
    }

    /// Sends the writes as the server would answer them: the body stored back.
    fn send(b: &mut EventBroadcaster, now: SimTime, n: &EventNote) -> Vec<ApiRequest> {
        let writes = b.write(now, n);
        for w in &writes {
            let stored = match &w.request.body {
                RequestBody::Object(v) => v.clone(),
                _ => w
                    .create_if_missing
                    .as_ref()
                    .and_then(|c| match &c.body {
                        RequestBody::Object(v) => Some(v.clone()),
                        _ => None,
                    })
                    .unwrap_or_default(),
            };
            b.written(&w.key, &stored);
        }
        writes.into_iter().map(|w| w.request).collect()
    }

    fn body(r: &ApiRequest) -> &Value {
        match &r.body {
            RequestBody::Object(v) | RequestBody::Patch(_, v) => v,
            RequestBody::None => &Value::Null,
        }
    }

    #[test]
    fn a_repeated_event_is_patched_with_its_count_and_last_time() {
        let mut b = kubelet();
        let t0 = SimTime::from_ms(5_000);
        let first = send(&mut b, t0, &note("BackOff", "Back-off restarting"));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].verb, crate::api::Verb::Create);
        let ev = body(&first[0]);
        assert_eq!(ev["metadata"]["name"], "web-1.1816687fea5cf200");
        assert_eq!(ev["count"], 1);
        assert_eq!(ev["firstTimestamp"], "2025-01-01T00:00:05Z");
        assert_eq!(
            ev["source"],
            json!({"component": "kubelet", "host": "node-1"})
        );
        assert_eq!(ev["reportingComponent"], "kubelet");
        assert_eq!(ev["reportingInstance"], "node-1");
        assert_eq!(
            ev["involvedObject"],
            json!({"kind": "Pod", "namespace": "default", "name": "web-1", "uid": "u1",
                "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "spec.containers{app}"})
        );
        let again = send(
            &mut b,
            SimTime::from_ms(65_000),
            &note("BackOff", "Back-off restarting"),
        );
        assert_eq!(again[0].verb, crate::api::Verb::Patch);
        assert_eq!(again[0].name, "web-1.1816687fea5cf200");
        assert_eq!(
            body(&again[0]),
            &json!({"count": 2, "lastTimestamp": "2025-01-01T00:01:05Z",
                "message": "Back-off restarting"})
        );
    }

    #[test]
    fn the_tenth_similar_message_starts_a_combined_event() {
        let mut b = kubelet();
        let t = SimTime::from_ms(1_000);
        for i in 0..9 {
            let w = send(&mut b, t, &note("Failed", &format!("error {i}")));
            assert_eq!(body(&w[0])["message"], format!("error {i}"));
        }
        let tenth = send(&mut b, t, &note("Failed", "error 9"));
        let ev = body(&tenth[0]);
        assert_eq!(ev["message"], "(combined from similar events): error 9");
        assert_eq!(
            (&ev["reportingComponent"], &ev["reportingInstance"]),
            (&json!(""), &json!(""))
        );
        let eleventh = send(&mut b, t, &note("Failed", "error 10"));
        assert_eq!(eleventh[0].verb, crate::api::Verb::Patch);
        assert_eq!(
            body(&eleventh[0])["message"],
            "(combined from similar events): error 10"
        );
        assert_eq!(body(&eleventh[0])["count"], 2);
        // The set stays below the threshold (`PopAny`), so a message still in it patches its
        // own Event.
        let repeat = send(&mut b, t, &note("Failed", "error 5"));
        assert_eq!(repeat[0].verb, crate::api::Verb::Patch);
        assert_eq!(body(&repeat[0])["message"], "error 5");
        assert_eq!(body(&repeat[0])["count"], 2);
    }

    #[test]
    fn the_spam_filter_lets_25_through_then_one_per_five_minutes() {
        let mut b = kubelet();
        let t = SimTime::from_ms(0);
        let sent = (0..30)
            .filter(|i| !send(&mut b, t, &note(&format!("R{i}"), "m")).is_empty())
            .count();
        assert_eq!(sent, 25);
        assert!(send(&mut b, SimTime::from_ms(299_999), &note("R", "m")).is_empty());
        assert_eq!(
            send(&mut b, SimTime::from_ms(300_000), &note("R", "m")).len(),
            1
        );
        // Another object has its own bucket.
        let other = EventNote::new(
            ObjectRef::to(
                &json!({"metadata": {"name": "web-2", "uid": "u2"}}),
                "v1",
                "Pod",
            ),
            EventType::Warning,
            "R",
            "m".into(),
        );
        assert_eq!(send(&mut b, SimTime::from_ms(300_000), &other).len(), 1);
    }

    #[test]
    fn scheduler_repeats_become_a_series_patched_once_then_at_the_finish() {
        let mut b = EventBroadcaster::new(
            EventApi::EventsV1 {
                controller: "default-scheduler".into(),
                instance: "default-scheduler-control-plane".into(),
            },
            "system:kube-scheduler",
        );
        let failed = |msg: &str| {
            EventNote::new(pod(), EventType::Warning, "FailedScheduling", msg.into())
                .action("Scheduling")
        };
        let first = send(&mut b, SimTime::from_ms(1_000), &failed("0/3 nodes"));
        let ev = body(&first[0]);
        assert_eq!(ev["eventTime"], "2025-01-01T00:00:01.000000Z");
        assert_eq!(ev["reportingComponent"], "default-scheduler");
        assert_eq!(ev["source"], json!({}));
        assert!(ev["firstTimestamp"].is_null());
        let second = send(&mut b, SimTime::from_ms(11_000), &failed("0/4 nodes"));
        assert_eq!(
            body(&second[0]),
            &json!({"series": {"count": 2, "lastObservedTime": "2025-01-01T00:00:11.000000Z"}})
        );
        assert!(send(&mut b, SimTime::from_ms(21_000), &failed("0/3 nodes")).is_empty());
        // At the 6-minute tick the series was last seen 339 s before: kept. At 12 minutes it
        // is finished with its count of 3, before the next report starts a new event.
        let later = send(&mut b, SimTime::from_ms(720_000), &failed("0/3 nodes"));
        assert_eq!(
            body(&later[0]),
            &json!({"series": {"count": 3, "lastObservedTime": "2025-01-01T00:00:21.000000Z"}})
        );
        assert_eq!(later[1].verb, crate::api::Verb::Create);
    }
}
