//! Embed mode: the playground in an iframe of someone's documentation: reading the embed URL,
//! the storage key each embed owns, and the postMessage API (validating requests, shaping
//! replies, what each request does to the model) as pure functions. The DOM calls that listen,
//! post and measure are `crate::platform::host_page`. The API is documented in
//! docs/embedding.md.

use std::rc::Rc;

use converge_core::json::{json, Value};

use super::{gallery, Effect, Model, Msg, Reaction, Theme};

/// Every message of the API carries this protocol marker and version.
pub const PROTOCOL: &str = "converge";
pub const VERSION: u64 = 1;

/// What the embed URL asks for: `?embed&id=a&scenario=paused-controller&lesson&step=2&theme=dark
/// &readonly&origin=https://docs.example.com`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbedConfig {
    /// Names this embed among others on the page (default: the scenario id); it scopes its
    /// storage and is echoed in every message it sends.
    pub id: String,
    pub scenario: Option<String>,
    /// Show the scenario's lesson panel.
    pub lesson: bool,
    /// The lesson step to start at (1-based in the URL, stored 0-based).
    pub step: usize,
    pub theme: Option<Theme>,
    /// No editor and no Apply: readers step and watch.
    pub readonly: bool,
    /// The only origin allowed to drive the embed and receive its replies (default: any parent).
    pub origin: Option<String>,
}

/// Query parameter values are short; longer ones are refused rather than stored.
const MAX_PARAM: usize = 200;

fn decode(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query's parameters in order (`a&b=c` gives `a` with an empty value).
pub fn params(search: &str) -> Vec<(String, String)> {
    search
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}

/// The embed configuration, when the URL has `embed`; an error names the bad parameter.
pub fn parse_query(search: &str) -> Option<Result<EmbedConfig, String>> {
    let ps = params(search);
    let get = |k: &str| ps.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    get("embed")?;
    Some((|| {
        for (k, v) in &ps {
            if v.len() > MAX_PARAM {
                return Err(format!(
                    "the {k} parameter is longer than {MAX_PARAM} characters"
                ));
            }
        }
        let scenario = get("scenario").filter(|s| !s.is_empty());
        let id = get("id")
            .filter(|s| !s.is_empty())
            .or_else(|| scenario.clone())
            .unwrap_or_else(|| "starter".into());
        if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(format!(
                "id {id:?} may only hold letters, digits, '-', '_' and '.'"
            ));
        }
        let step = match get("step").filter(|s| !s.is_empty()) {
            None => 0,
            Some(s) => match s.parse::<usize>() {
                Ok(n) if n >= 1 => n - 1,
                _ => return Err(format!("step {s:?} is not a step number (1, 2, ...)")),
            },
        };
        let theme = match get("theme").as_deref() {
            None | Some("") | Some("system") => None,
            Some("light") => Some(Theme::Light),
            Some("dark") => Some(Theme::Dark),
            Some(t) => return Err(format!("theme {t:?} is not light, dark or system")),
        };
        let origin = get("origin").filter(|s| !s.is_empty());
        if let Some(o) = &origin {
            let ok = (o.starts_with("https://") || o.starts_with("http://"))
                && !o.trim_end_matches('/').contains(['?', '#'])
                && o.matches('/').count() == 2;
            if !ok {
                return Err(format!(
                    "origin {o:?} is not an origin such as https://docs.example.com"
                ));
            }
        }
        Ok(EmbedConfig {
            id,
            scenario,
            lesson: get("lesson").is_some(),
            step,
            theme,
            readonly: get("readonly").is_some(),
            origin,
        })
    })())
}

impl EmbedConfig {
    /// The localStorage key this embed owns for a scenario (None: the starter cluster): two
    /// embeds of one page never share one.
    pub fn storage_key(&self, scenario: Option<&str>) -> String {
        format!(
            "converge.embed.{}.{}",
            self.id,
            scenario.unwrap_or("starter")
        )
    }

    /// The origin the embed's own messages are posted for (`*`: any parent).
    pub fn target_origin(&self) -> String {
        self.origin.as_deref().unwrap_or("*").to_owned()
    }

    /// Whether a message from `origin` may drive this embed.
    pub fn allows(&self, origin: &str) -> bool {
        self.origin
            .as_deref()
            .is_none_or(|o| o.trim_end_matches('/') == origin)
    }
}

/// A request from the host page.
#[derive(Clone, Debug, PartialEq)]
pub enum HostRequest {
    /// Open a gallery scenario (its lesson at `step`, 1-based).
    Load {
        scenario: String,
        step: usize,
    },
    Step,
    NextEvent,
    Play,
    Pause,
    RunUntilConverged,
    Reset,
    /// Reply with the state.
    GetState,
}

/// A validated message: the host's correlation id (echoed in the reply) and the request.
#[derive(Clone, Debug, PartialEq)]
pub struct HostEnvelope {
    pub request_id: Value,
    pub request: HostRequest,
}

/// Reads a message. Err carries the reply's error text (and the id, when one was readable).
pub fn parse_message(data: &Value) -> Result<HostEnvelope, (Value, String)> {
    let Some(obj) = data.as_object() else {
        return Err((Value::Null, "a message must be a JSON object".into()));
    };
    let request_id = obj.get("requestId").cloned().unwrap_or(Value::Null);
    let fail = |m: String| Err((request_id.clone(), m));
    match obj.get(PROTOCOL) {
        Some(v) if v.as_u64() == Some(VERSION) => {}
        Some(v) => {
            return fail(format!(
                "unsupported protocol version {v}; this embed speaks {PROTOCOL}: {VERSION}"
            ))
        }
        None => return fail(format!("missing \"{PROTOCOL}\": {VERSION}")),
    }
    let Some(kind) = obj.get("type").and_then(Value::as_str) else {
        return fail("missing \"type\" (a string)".into());
    };
    const KNOWN: &[&str] = &[PROTOCOL, "type", "requestId", "scenario", "step"];
    if let Some(k) = obj.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return fail(format!("unknown field {k:?}"));
    }
    let no_args = |r: HostRequest| {
        if obj.contains_key("scenario") || obj.contains_key("step") {
            Err((
                request_id.clone(),
                format!("{kind:?} takes no scenario or step"),
            ))
        } else {
            Ok(r)
        }
    };
    let request = match kind {
        "load" => {
            let Some(scenario) = obj.get("scenario").and_then(Value::as_str) else {
                return fail("load needs \"scenario\": a gallery id such as \"scale-up\"".into());
            };
            let step = match obj.get("step") {
                None => 1,
                Some(s) => match s.as_u64() {
                    Some(n) if n >= 1 => n as usize,
                    _ => return fail(format!("step {s} is not a step number (1, 2, ...)")),
                },
            };
            Ok(HostRequest::Load {
                scenario: scenario.to_owned(),
                step,
            })
        }
        "step" => no_args(HostRequest::Step),
        "nextEvent" => no_args(HostRequest::NextEvent),
        "play" => no_args(HostRequest::Play),
        "pause" => no_args(HostRequest::Pause),
        "runUntilConverged" => no_args(HostRequest::RunUntilConverged),
        "reset" => no_args(HostRequest::Reset),
        "getState" => no_args(HostRequest::GetState),
        other => {
            return fail(format!(
                "unknown type {other:?}: expected load, step, nextEvent, play, pause, runUntilConverged, reset or getState"
            ))
        }
    };
    request.map(|request| HostEnvelope {
        request_id,
        request,
    })
}

/// The model message a request becomes (Load is handled by the app, GetState changes nothing).
pub fn to_msg(m: &Model, r: &HostRequest) -> Option<Msg> {
    match r {
        HostRequest::Load { .. } => None,
        HostRequest::Step => Some(Msg::Step),
        HostRequest::NextEvent => Some(Msg::NextEvent),
        HostRequest::Play => (!m.playing).then_some(Msg::TogglePlay),
        HostRequest::Pause => m.playing.then_some(Msg::TogglePlay),
        HostRequest::RunUntilConverged => Some(Msg::RunUntilConverged),
        HostRequest::Reset => Some(Msg::Reset),
        HostRequest::GetState => None,
    }
}

/// The state a host reads: time, steps, convergence, the lesson's progress and the selected
/// object's generation and observedGeneration.
pub fn state(m: &Model, embed_id: &str) -> Value {
    let w = &m.world;
    let selected = m.selected.as_ref().and_then(|k| w.object(k));
    let lesson = match (&m.lessons.opened, m.lessons.progress()) {
        (Some(o), Some(p)) => o.guide.as_ref().map(|g| {
            json!({
                "title": g.title,
                "step": (p.step + 1).min(g.steps.len()),
                "steps": g.steps.len(),
                "finished": p.finished(g),
                "done": m.lessons.done(),
            })
        }),
        _ => None,
    };
    json!({
        PROTOCOL: VERSION,
        "type": "state",
        "embed": embed_id,
        "scenario": m.lessons.id(),
        "timeMs": w.now().as_ms(),
        "steps": w.steps(),
        "playing": m.playing,
        "converged": w.is_converged(),
        "lesson": lesson,
        "selected": m.selected.as_ref().map(converge_core::engine::world::key_text),
        "generation": selected.and_then(|o| o.pointer("/metadata/generation")).cloned(),
        "observedGeneration": selected.and_then(|o| o.pointer("/status/observedGeneration")).cloned(),
    })
}

impl Model {
    /// A message from the host page: validated, performed, and answered (with an error, or
    /// with the state after it).
    pub(super) fn on_host_message(&mut self, data: &Value, origin: &str) -> Reaction {
        let Some(cfg) = self.page.embed.clone() else {
            return Reaction::none();
        };
        let reply = |message: Value| Effect::ReplyToSender {
            message,
            origin: origin.to_owned(),
        };
        if !cfg.allows(origin) {
            return Reaction::effects(vec![reply(error(
                &cfg.id,
                Value::Null,
                &format!("origin {origin} may not drive this embed"),
            ))]);
        }
        let envelope = match parse_message(data) {
            Ok(e) => e,
            Err((id, message)) => {
                return Reaction::effects(vec![reply(error(&cfg.id, id, &message))])
            }
        };
        if matches!(envelope.request, HostRequest::Load { .. }) && !self.page.gallery.loaded() {
            self.page.deferred = Some(super::Deferred::Host {
                data: data.clone(),
                origin: origin.to_owned(),
            });
            return Reaction::none();
        }
        let mut reaction = match &envelope.request {
            HostRequest::Load { scenario, step } => {
                match gallery::open_in(&self.page.gallery, scenario) {
                    Ok(o) => {
                        let mut effects = Vec::new();
                        if self.playing {
                            effects.push(Effect::StopTicking);
                        }
                        self.open_scenario(Some(Rc::new(o)), step - 1);
                        effects.push(self.save());
                        Reaction {
                            render: true,
                            effects,
                        }
                    }
                    Err(e) => {
                        return Reaction::effects(vec![reply(error(
                            &cfg.id,
                            envelope.request_id,
                            &e,
                        ))])
                    }
                }
            }
            r => match to_msg(self, r) {
                Some(m) => self.update(m),
                None => Reaction::none(),
            },
        };
        let mut state = state(self, &cfg.id);
        state["requestId"] = envelope.request_id;
        reaction.effects.push(reply(state));
        reaction
    }

    /// Whether a host message is a valid Step or Next event request this embed takes.
    pub(super) fn host_asks_for_a_step(&self, data: &Value, origin: &str) -> bool {
        self.page.embed.as_ref().is_some_and(|c| c.allows(origin))
            && matches!(
                parse_message(data).map(|e| e.request),
                Ok(HostRequest::Step | HostRequest::NextEvent)
            )
    }

    /// Embed mode, once the app listens: tells the host page it runs and takes messages (the
    /// poster before it answers only `start`).
    pub(super) fn announce_to_host(&self) -> Vec<Effect> {
        let Some(cfg) = &self.page.embed else {
            return Vec::new();
        };
        vec![Effect::PostToHost {
            message: json!({PROTOCOL: VERSION, "type": "ready", "embed": cfg.id, "scenario": self.lessons.id()}),
            target_origin: cfg.target_origin(),
        }]
    }

    /// Embed mode: reports the content's height to the host page when it changed.
    pub(super) fn report_height(&mut self, px: i32) -> Vec<Effect> {
        let Some(cfg) = &self.page.embed else {
            return Vec::new();
        };
        if px == self.page.reported_height {
            return Vec::new();
        }
        let effect = Effect::PostToHost {
            message: height(&cfg.id, px),
            target_origin: cfg.target_origin(),
        };
        self.page.reported_height = px;
        vec![effect]
    }
}

/// An error reply.
pub fn error(embed_id: &str, request_id: Value, message: &str) -> Value {
    json!({PROTOCOL: VERSION, "type": "error", "embed": embed_id, "requestId": request_id, "error": message})
}

/// The height report the embed posts to its host after every render that changed it.
pub fn height(embed_id: &str, px: i32) -> Value {
    json!({PROTOCOL: VERSION, "type": "height", "embed": embed_id, "height": px})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_embed_url_is_read_with_defaults() {
        let c = parse_query("?embed&scenario=paused-controller&lesson&step=2&theme=dark&readonly")
            .and_then(Result::ok);
        assert_eq!(
            c,
            Some(EmbedConfig {
                id: "paused-controller".into(),
                scenario: Some("paused-controller".into()),
                lesson: true,
                step: 1,
                theme: Some(Theme::Dark),
                readonly: true,
                origin: None,
            })
        );
        assert_eq!(
            parse_query("?scenario=x"),
            None,
            "no embed parameter: not an embed"
        );
    }

    #[test]
    fn two_embeds_of_one_scenario_keep_separate_storage() {
        let a = parse_query("?embed&id=a&scenario=scale-up").and_then(Result::ok);
        let b = parse_query("?embed&id=b&scenario=scale-up").and_then(Result::ok);
        let key = |c: EmbedConfig| c.storage_key(c.scenario.as_deref());
        let (a, b) = (a.map(key), b.map(key));
        assert_eq!(a.as_deref(), Some("converge.embed.a.scale-up"));
        assert_ne!(a, b);
    }

    #[test]
    fn bad_embed_parameters_are_errors_naming_them() {
        let err = |q: &str| parse_query(q).and_then(Result::err).unwrap_or_default();
        assert_eq!(
            err("?embed&step=0"),
            "step \"0\" is not a step number (1, 2, ...)"
        );
        assert_eq!(
            err("?embed&theme=pink"),
            "theme \"pink\" is not light, dark or system"
        );
        assert!(err("?embed&id=a%2Fb").starts_with("id \"a/b\" may only hold"));
        assert!(err("?embed&origin=javascript:alert(1)").starts_with("origin "));
        assert!(err(&format!("?embed&id={}", "a".repeat(300))).contains("longer than 200"));
    }

    #[test]
    fn the_origin_parameter_limits_who_may_drive_the_embed() {
        let c = parse_query("?embed&origin=https%3A%2F%2Fdocs.example.com")
            .and_then(Result::ok)
            .map(|c| {
                (
                    c.allows("https://docs.example.com"),
                    c.allows("https://evil.example"),
                )
            });
        assert_eq!(c, Some((true, false)));
    }

    #[test]
    fn messages_are_validated_and_bad_ones_get_a_reason() {
        let ok = |v: Value| parse_message(&v).map(|e| e.request);
        assert_eq!(
            ok(json!({"converge": 1, "type": "step"})),
            Ok(HostRequest::Step)
        );
        assert_eq!(
            ok(
                json!({"converge": 1, "type": "load", "scenario": "scale-up", "step": 2, "requestId": 7})
            ),
            Ok(HostRequest::Load {
                scenario: "scale-up".into(),
                step: 2
            })
        );
        let bad = |v: Value| parse_message(&v).err().unwrap_or_default();
        assert_eq!(bad(json!("step")).1, "a message must be a JSON object");
        assert_eq!(bad(json!({"type": "step"})).1, "missing \"converge\": 1");
        assert_eq!(
            bad(json!({"converge": 2, "type": "step"})).1,
            "unsupported protocol version 2; this embed speaks converge: 1"
        );
        assert_eq!(
            bad(json!({"converge": 1, "type": "explode", "requestId": "r1"})),
            (json!("r1"), "unknown type \"explode\": expected load, step, nextEvent, play, pause, runUntilConverged, reset or getState".to_owned())
        );
        assert_eq!(
            bad(json!({"converge": 1, "type": "load"})).1,
            "load needs \"scenario\": a gallery id such as \"scale-up\""
        );
        assert_eq!(
            bad(json!({"converge": 1, "type": "load", "scenario": "x", "step": 0})).1,
            "step 0 is not a step number (1, 2, ...)"
        );
        assert_eq!(
            bad(json!({"converge": 1, "type": "step", "extra": 1})).1,
            "unknown field \"extra\""
        );
        assert_eq!(
            bad(json!({"converge": 1, "type": "step", "step": 1})).1,
            "\"step\" takes no scenario or step"
        );
    }

    #[test]
    fn the_state_reply_reports_the_lesson() {
        let mut m = Model::default();
        let _ = m.update(Msg::Lesson(crate::state::lesson::LessonMsg::Open(
            "scale-up".into(),
        )));
        let s = state(&m, "a");
        assert_eq!(s["type"], "state");
        assert_eq!(s["scenario"], "scale-up");
        assert_eq!(s["lesson"]["step"], 1);
        assert_eq!(s["lesson"]["steps"], 3);
        assert_eq!(s["generation"], 1);
    }
}
