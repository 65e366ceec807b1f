//! The browser's side of a long session's checkpoint (`checkpoint` feature; the decisions are
//! `crate::state::checkpoint`'s): the [`SessionCheckpointer`] web/checkpoint-worker.js drives in
//! a Web Worker (and web/starter-checkpoint.mjs in Node, for the checkpoint a release build
//! ships of the large starter), and the record web/boot.js read before the app started.

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use converge_core::view::session::Starter;

use crate::persist;
use crate::state::checkpoint::{Bytes, Checkpointer, Offered, Stored};
use crate::state::Workspace;

/// The worker's checkpointer: one per worker, following the page's saved workspace.
#[wasm_bindgen]
pub struct SessionCheckpointer(Checkpointer);

#[wasm_bindgen]
impl SessionCheckpointer {
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)] // a JS constructor
    pub fn new() -> SessionCheckpointer {
        SessionCheckpointer(Checkpointer::default())
    }

    /// Brings the world up to the saved workspace `json` and answers the checkpoint to store,
    /// `{cut, events, steps, log, bytes}`, or null when there is nothing new worth storing.
    /// `stored` is the record in IndexedDB (or null): a new worker goes on from it when it fits,
    /// else from `shipped`, the large starter's checkpoint the release ships (or null), when that
    /// fits. A workspace that cannot be read or replayed is an error (a string).
    pub fn update(
        &mut self,
        json: &str,
        stored: JsValue,
        shipped: JsValue,
    ) -> Result<JsValue, JsValue> {
        let w = persist::from_json(json).map_err(|e| JsValue::from_str(&e.to_string()))?;
        let Some(s) = self
            .0
            .update(&w, record(&stored), record(&shipped))
            .map_err(|e| JsValue::from_str(&e.to_string()))?
        else {
            return Ok(JsValue::NULL);
        };
        let o = Object::new();
        let set = |k: &str, v: JsValue| Reflect::set(&o, &k.into(), &v).map(drop);
        set("cut", (s.cut as f64).into())?;
        set("events", (s.events as f64).into())?;
        set("steps", (s.steps as f64).into())?;
        set("log", s.log.into())?;
        set("bytes", Uint8Array::from(s.bytes.as_slice()).into())?;
        Ok(o.into())
    }

    /// The checkpoint last answered is stored (or the stored one was the same).
    pub fn confirm(&mut self) {
        self.0.confirm();
    }
}

/// The saved workspace of a fresh large starter (`?starter=large`), as the page saves it:
/// web/starter-checkpoint.mjs gives it to a [`SessionCheckpointer`] when it builds the
/// checkpoint a release build ships.
#[wasm_bindgen(js_name = largeStarterWorkspace)]
pub fn large_starter_workspace() -> String {
    persist::to_json(&Workspace::fresh(Starter::Large))
}

/// The record web/boot.js read for this build (`convergeCheckpoint`), taken off the page so its
/// bytes are not held twice, and whether it is the one the release ships (its `shipped`); None
/// when there is none or it is not one.
pub fn prefetched() -> Option<(Offered, bool)> {
    let w = web_sys::window()?;
    let key = JsValue::from_str("convergeCheckpoint");
    let found = Reflect::get(&w, &key).ok()?;
    let _ = Reflect::delete_property(&w, &key);
    let shipped = Reflect::get(&found, &"shipped".into()).ok()?.as_bool() == Some(true);
    Some((record(&found)?, shipped))
}

/// A stored record, `{cut, events, steps, log, bytes}`, as [`Stored`] (its bytes left in
/// JavaScript's memory); None for anything else.
fn record(value: &JsValue) -> Option<Offered> {
    if !value.is_object() {
        return None;
    }
    let get = |k: &str| Reflect::get(value, &k.into()).ok();
    let number = |k: &str| {
        get(k)
            .and_then(|v| v.as_f64())
            .filter(|n| n.fract() == 0.0 && *n >= 0.0)
    };
    Some(Stored {
        cut: number("cut")? as usize,
        events: number("events")? as u64,
        steps: number("steps")? as u64,
        log: get("log")?.as_string()?,
        bytes: Box::new(JsBytes(get("bytes")?.dyn_into::<Uint8Array>().ok()?)),
    })
}

/// A checkpoint's bytes as IndexedDB gave them, copied into the wasm a piece at a time.
#[derive(Debug)]
struct JsBytes(Uint8Array);

impl Bytes for JsBytes {
    fn size(&self) -> usize {
        self.0.length() as usize
    }

    fn read_at(&self, at: usize, buf: &mut [u8]) {
        // A checkpoint is far below 4 GiB: offsets fit a u32.
        let (from, to) = (at as u32, (at + buf.len()) as u32);
        self.0.subarray(from, to).copy_to(buf);
    }
}
