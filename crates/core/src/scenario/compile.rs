//! From the file format to what the runner needs: the world at t=0 (cluster, RBAC, objects),
//! resolved requests and faults, and checked expectations. Every semantic error names the field
//! path (`actions[2].target`) so the loader can point at its line.

use serde_json::Value;

use super::format::{
    ActionVerb, Expectation, ImageBehaviourName, ImageRule, KstatusName, PatchKind, RequestMatch,
    Scenario,
};
use super::path::FieldPath;
use super::ScenarioError;
use crate::api::selector::Selector;
use crate::api::{ApiRequest, AuditEntry, GroupResource, ObjectKey, PatchType, ResourceInfo};
use crate::controllers::{util, ImageBehaviour};
use crate::engine::world::ADMIN;
use crate::engine::{ClusterConfig, Fault, Input, NodeSpec, StepReport, World};

/// Controller names a scenario may pause, crash or disable (kubelets are `kubelet/<node>`).
pub const CONTROLLERS: &[&str] = &[
    "deployment-controller",
    "replicaset-controller",
    "scheduler",
    "horizontal-pod-autoscaler",
    "database-controller",
    "naive-controller",
];

/// A resolved action.
#[derive(Clone, Debug)]
pub(crate) struct CompiledAction {
    pub index: usize,
    pub id: Option<String>,
    pub at_ms: u64,
    pub request: ApiRequest,
    /// The named object (for `bodyFrom` copies and messages); None for list and nameless create.
    pub key: Option<ObjectKey>,
    pub body_from: Option<usize>,
    /// A merge patch applied to the `bodyFrom` copy.
    pub edit: Option<Value>,
    /// `patch deployments/default/web/status as app`.
    pub label: String,
}

#[derive(Clone, Debug)]
pub(crate) enum Check {
    Kstatus {
        status: KstatusName,
        message: Option<String>,
    },
    Field {
        path: FieldPath,
        equals: Value,
    },
    Condition {
        type_: String,
        status: Option<String>,
        reason: Option<String>,
        message: Option<String>,
    },
    Exists(bool),
    Response {
        action: usize,
        code: Option<u16>,
        message: Option<String>,
    },
    /// A number field against bounds (`atLeast`, `atMost`).
    Compare {
        path: FieldPath,
        bounds: Bounds,
    },
    /// A field's text against a regular expression.
    Matches {
        path: FieldPath,
        pattern: Pattern,
    },
    /// How many objects of a resource there are, chosen by selector and/or owner.
    Count {
        gr: GroupResource,
        namespace: String,
        selector: Option<(Selector, String)>,
        owner: Option<ObjectKey>,
        bounds: Bounds,
    },
    /// How many answered requests match.
    Requests {
        request: RequestCheck,
        bounds: Bounds,
    },
}

/// A number's bounds: `equals`, or `atLeast` and/or `atMost`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bounds {
    pub equals: Option<f64>,
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

impl Bounds {
    pub fn holds(&self, n: f64) -> bool {
        self.equals.is_none_or(|e| n == e)
            && self.at_least.is_none_or(|l| n >= l)
            && self.at_most.is_none_or(|m| n <= m)
    }

    /// `equals 3`, `is at least 2`, `is at most 13`, `is between 2 and 5`.
    pub fn text(&self) -> String {
        let n = |x: f64| {
            serde_json::Number::from_f64(x).map_or(x.to_string(), |v| {
                v.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                    .map_or(v.to_string(), |f| format!("{}", f as i64))
            })
        };
        match (self.equals, self.at_least, self.at_most) {
            (Some(e), _, _) => format!("equals {}", n(e)),
            (None, Some(l), Some(m)) => format!("is between {} and {}", n(l), n(m)),
            (None, Some(l), None) => format!("is at least {}", n(l)),
            (None, None, Some(m)) => format!("is at most {}", n(m)),
            (None, None, None) => "is any number".into(),
        }
    }
}

/// A regular expression from a scenario file (regex-lite's syntax).
#[derive(Clone, Debug)]
pub(crate) struct Pattern(pub regex_lite::Regex);

/// A request the audit log must show (a lesson's `request`, an expectation's `requests`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RequestCheck {
    pub principal: Option<String>,
    pub verb: Option<&'static str>,
    pub gr: GroupResource,
    pub status: bool,
    pub namespace: String,
    /// Empty: any name.
    pub name: String,
    pub code: Option<u16>,
}

impl RequestCheck {
    pub fn matches(&self, e: &AuditEntry) -> bool {
        e.gr == self.gr
            && e.subresource.is_some() == self.status
            && e.namespace == self.namespace
            && (self.name.is_empty() || e.name == self.name)
            && self.principal.as_ref().is_none_or(|p| *p == e.principal)
            && self.verb.is_none_or(|v| v == e.verb.as_str())
            && self.code.is_none_or(|c| c == e.code)
    }
}

/// Resolves a `request`/`requests` match; `p` is its field path. Returns the check and how it
/// reads (`alice patch deployments/default/web and gets 200`).
pub(crate) fn compile_request(
    world: &World,
    r: &RequestMatch,
    p: &str,
) -> Result<(RequestCheck, String), ScenarioError> {
    let t = resolve_target(world, &r.target).map_err(|m| err(format!("{p}.target"), m))?;
    let verb = r.verb.map(verb_name);
    let mut description = format!(
        "{} {}",
        r.principal.as_deref().unwrap_or("anyone"),
        verb.unwrap_or("requests")
    );
    description.push_str(&format!(" {}", r.target));
    if t.name.is_empty() {
        description.push_str(" (any name)");
    }
    if let Some(c) = r.code {
        description.push_str(&format!(" and gets {c}"));
    }
    Ok((
        RequestCheck {
            principal: r.principal.clone(),
            verb,
            gr: t.info.gr.clone(),
            status: t.status,
            namespace: t.namespace.clone(),
            name: t.name.clone(),
            code: r.code,
        },
        description,
    ))
}

/// Over a `within` window: once (`Eventually`), at every moment (`always`), at none (`never`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Eventually,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum When {
    At(u64),
    Within { from: u64, deadline: u64 },
    OnAction,
}

#[derive(Clone, Debug)]
pub(crate) struct CompiledExpectation {
    pub key: Option<ObjectKey>,
    pub check: Check,
    pub when: When,
    pub mode: Mode,
    pub description: String,
}

/// Everything a run starts from.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub world: World,
    pub setup: Vec<StepReport>,
    pub actions: Vec<CompiledAction>,
    pub faults: Vec<(u64, usize, Input)>,
    pub expectations: Vec<CompiledExpectation>,
    pub lesson: Option<super::lesson::LessonGuide>,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path, message)
}

/// The engine's cluster config for a scenario.
pub(crate) fn cluster_config(s: &Scenario, seed: u64) -> Result<ClusterConfig, ScenarioError> {
    let mut config = ClusterConfig {
        seed,
        ..ClusterConfig::default()
    };
    if s.cluster.nodes.is_empty() {
        return Err(err("cluster.nodes", "a cluster needs at least one node"));
    }
    let mut names = std::collections::BTreeSet::new();
    config.nodes = Vec::new();
    for (i, n) in s.cluster.nodes.iter().enumerate() {
        if n.name.is_empty() {
            return Err(err(format!("cluster.nodes[{i}].name"), "must not be empty"));
        }
        if !names.insert(n.name.clone()) {
            return Err(err(
                format!("cluster.nodes[{i}].name"),
                format!("node {:?} is listed twice", n.name),
            ));
        }
        let mut spec = NodeSpec::new(&n.name, &n.cpu.0, &n.memory.0);
        spec.pods = n.pods;
        config.nodes.push(spec);
    }
    if let Some(l) = s.cluster.watch_latency {
        config.watch_latency_ms = l.ms();
    }
    let c = &mut config.controllers;
    for (i, name) in s.cluster.disabled_controllers.iter().enumerate() {
        match name.as_str() {
            "deployment-controller" => c.deployment = false,
            "replicaset-controller" => c.replicaset = false,
            "scheduler" => c.scheduler = false,
            "kubelet" => c.kubelets = false,
            "horizontal-pod-autoscaler" => c.hpa = false,
            "database-controller" => c.database = false,
            other => {
                return Err(err(
                    format!("cluster.disabledControllers[{i}]"),
                    format!("unknown controller {other:?}: expected one of deployment-controller, replicaset-controller, scheduler, kubelet, horizontal-pod-autoscaler, database-controller"),
                ))
            }
        }
    }
    if let Some(naive) = &s.cluster.naive_controller {
        let (plural, group) = naive.split_once('.').unwrap_or((naive.as_str(), ""));
        c.naive = Some(GroupResource::new(group, plural));
    }
    for (i, rule) in s.images.iter().enumerate() {
        config.env.images.insert(
            rule.image.clone(),
            image_behaviour(rule, &format!("images[{i}]"))?,
        );
    }
    Ok(config)
}

fn image_behaviour(rule: &ImageRule, path: &str) -> Result<ImageBehaviour, ScenarioError> {
    if rule.image.is_empty() {
        return Err(err(format!("{path}.image"), "must not be empty"));
    }
    Ok(match rule.behaviour {
        ImageBehaviourName::Ok => ImageBehaviour::Ok {
            pull_ms: rule.pull_time.map_or(1000, |d| d.ms()),
        },
        ImageBehaviourName::PullFails => ImageBehaviour::PullFails,
        ImageBehaviourName::Crashes => ImageBehaviour::Crashes {
            run_ms: rule.run_time.map_or(1000, |d| d.ms()),
        },
    })
}

/// Builds the world at t=0 and resolves everything against it.
pub(crate) fn compile(s: &Scenario) -> Result<Compiled, ScenarioError> {
    compile_with_seed(s, s.seed)
}

pub(crate) fn compile_with_seed(s: &Scenario, seed: u64) -> Result<Compiled, ScenarioError> {
    if s.name.trim().is_empty() {
        return Err(err("name", "must not be empty"));
    }
    let config = cluster_config(s, seed)?;
    let node_names: Vec<String> = config.nodes.iter().map(|n| n.name.clone()).collect();
    let mut world = World::new(config);
    let mut setup = Vec::new();
    if let Some(rbac) = &s.rbac {
        world.set_rbac_enforced(rbac.enforce);
    }
    let rbac_objects = s.rbac.iter().flat_map(|r| r.objects.iter());
    let created: Vec<(String, &Value)> = rbac_objects
        .enumerate()
        .map(|(i, o)| (format!("rbac.objects[{i}]"), o))
        .chain(
            s.objects
                .iter()
                .enumerate()
                .map(|(i, o)| (format!("objects[{i}]"), o)),
        )
        .collect();
    for (path, obj) in created {
        let req = world
            .api()
            .create_request_for(ADMIN, obj.clone())
            .map_err(|e| err(&path, e.message))?;
        let report = world.apply(Input::Request { request: req });
        if let Some(r) = report.requests().find(|r| r.code >= 400) {
            return Err(err(
                &path,
                format!("creating it failed: {} {}", r.code, r.message),
            ));
        }
        setup.push(report);
    }

    let controllers = world.controller_names();
    let mut faults = Vec::new();
    for (i, f) in s.faults.iter().enumerate() {
        let p = format!("faults[{i}]");
        let mut inputs: Vec<(&str, Input)> = Vec::new();
        let controller = |field: &str, name: &str| -> Result<String, ScenarioError> {
            if controllers.iter().any(|c| c == name) {
                Ok(name.to_owned())
            } else {
                Err(err(
                    format!("{p}.{field}"),
                    format!(
                        "unknown controller {name:?}: this cluster runs {}",
                        controllers.join(", ")
                    ),
                ))
            }
        };
        let fault = |fault: Fault| Input::Fault { fault };
        if let Some(c) = &f.pause {
            inputs.push((
                "pause",
                fault(Fault::PauseController {
                    controller: controller("pause", c)?,
                }),
            ));
        }
        if let Some(c) = &f.resume {
            inputs.push((
                "resume",
                fault(Fault::ResumeController {
                    controller: controller("resume", c)?,
                }),
            ));
        }
        if let Some(c) = &f.crash {
            inputs.push((
                "crash",
                fault(Fault::CrashController {
                    controller: controller("crash", c)?,
                }),
            ));
        }
        if let Some(c) = &f.restart {
            inputs.push((
                "restart",
                fault(Fault::RestartController {
                    controller: controller("restart", c)?,
                }),
            ));
        }
        if let Some(w) = &f.watch_latency {
            let c = match &w.controller {
                Some(c) => Some(controller("watchLatency.controller", c)?),
                None => None,
            };
            inputs.push((
                "watchLatency",
                fault(Fault::WatchLatency {
                    controller: c,
                    ms: w.delay.ms(),
                }),
            ));
        }
        if let Some(a) = &f.api_failures {
            if ![409, 500, 503].contains(&a.code) {
                return Err(err(
                    format!("{p}.apiFailures.code"),
                    format!(
                        "{} is not an injectable failure: use 409, 500 or 503",
                        a.code
                    ),
                ));
            }
            inputs.push((
                "apiFailures",
                fault(Fault::ApiFailures {
                    principal: a.principal.clone(),
                    count: a.count,
                    code: a.code,
                }),
            ));
        }
        if f.clear_api_failures {
            inputs.push(("clearApiFailures", fault(Fault::ClearApiFailures)));
        }
        if let Some(ipf) = &f.image_pull_failure {
            if !node_names.contains(&ipf.node) {
                return Err(err(
                    format!("{p}.imagePullFailure.node"),
                    format!(
                        "unknown node {:?}: the cluster has {}",
                        ipf.node,
                        node_names.join(", ")
                    ),
                ));
            }
            inputs.push((
                "imagePullFailure",
                fault(Fault::ImagePullFailure {
                    node: ipf.node.clone(),
                    failing: ipf.failing,
                }),
            ));
        }
        if let Some(rule) = &f.image {
            inputs.push((
                "image",
                Input::SetImage {
                    image: rule.image.clone(),
                    behaviour: image_behaviour(rule, &format!("{p}.image"))?,
                },
            ));
        }
        if let Some(load) = &f.load {
            let t = resolve_target(&world, &load.target)
                .map_err(|m| err(format!("{p}.load.target"), m))?;
            if t.info.gr != util::deployments() || t.name.is_empty() || t.status {
                return Err(err(
                    format!("{p}.load.target"),
                    "load applies to a Deployment: deployments/<namespace>/<name>",
                ));
            }
            inputs.push((
                "load",
                Input::SetLoad {
                    target: format!("{}/{}", t.namespace, t.name),
                    millicores: util::cpu_millis(&Value::String(load.cpu.0.clone())),
                },
            ));
        }
        if let Some(r) = &f.rbac {
            inputs.push((
                "rbac",
                Input::SetRbac {
                    enforced: r.enforce,
                },
            ));
        }
        match inputs.len() {
            1 => {
                if let Some((_, input)) = inputs.pop() {
                    faults.push((f.at.ms(), i, input));
                }
            }
            0 => {
                return Err(err(
                    &p,
                    "names no fault: give one of pause, resume, crash, restart, watchLatency, apiFailures, clearApiFailures, imagePullFailure, image, load, rbac",
                ))
            }
            _ => {
                let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
                return Err(err(
                    &p,
                    format!("give one fault per entry, found {}", names.join(" and ")),
                ));
            }
        }
    }

    let mut actions: Vec<CompiledAction> = Vec::new();
    for i in 0..s.actions.len() {
        actions.push(compile_action(&world, s, i, &actions)?);
    }
    let mut expectations = Vec::new();
    for (i, e) in s.expect.iter().enumerate() {
        expectations.push(compile_expectation(&world, s, i, e, &actions)?);
    }
    let lesson = match &s.lesson {
        Some(l) => Some(super::lesson::LessonGuide::compile(&world, l)?),
        None => None,
    };
    Ok(Compiled {
        world,
        setup,
        actions,
        faults,
        expectations,
        lesson,
    })
}

/// A parsed target: `resource[.group]/[namespace/]name[/status]`.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub info: ResourceInfo,
    pub namespace: String,
    pub name: String,
    pub status: bool,
}

impl Target {
    pub fn key(&self) -> Option<ObjectKey> {
        (!self.name.is_empty())
            .then(|| ObjectKey::new(self.info.gr.clone(), &self.namespace, &self.name))
    }
}

pub(crate) fn resolve_target(world: &World, text: &str) -> Result<Target, String> {
    let parts: Vec<&str> = text.split('/').collect();
    let resource = parts[0];
    if resource.is_empty() {
        return Err(format!(
            "malformed target {text:?}: expected resource/namespace/name, e.g. deployments/default/web"
        ));
    }
    let (plural, group) = match resource.split_once('.') {
        Some((p, g)) => (p, Some(g)),
        None => (resource, None),
    };
    let matches: Vec<&ResourceInfo> = world
        .api()
        .resources()
        .filter(|r| r.gr.resource == plural && group.is_none_or(|g| r.gr.group == g))
        .collect();
    let info = match matches.as_slice() {
        [one] => (*one).clone(),
        [] => return Err(format!("unknown resource {resource:?} in target {text:?}")),
        _ => {
            return Err(format!(
                "resource {plural:?} is served by several API groups; write it as {plural}.<group>"
            ))
        }
    };
    let mut rest: Vec<&str> = parts[1..].to_vec();
    let want = if info.namespaced { 2 } else { 1 };
    let mut status = false;
    if rest.len() == want + 1 && rest.last() == Some(&"status") {
        status = true;
        rest.pop();
    }
    if rest.len() > want || rest.iter().any(|p| p.is_empty()) {
        let shape = if info.namespaced {
            format!("{resource}/<namespace>/<name>[/status]")
        } else {
            format!("{resource}/<name>[/status]")
        };
        return Err(format!("malformed target {text:?}: expected {shape}"));
    }
    if status && !info.status_subresource {
        return Err(format!(
            "{} has no status subresource (target {text:?})",
            info.gr.qualified()
        ));
    }
    let (namespace, name) = if info.namespaced {
        (
            rest.first().map_or("", |s| *s).to_owned(),
            rest.get(1).map_or("", |s| *s).to_owned(),
        )
    } else {
        (String::new(), rest.first().map_or("", |s| *s).to_owned())
    };
    Ok(Target {
        info,
        namespace,
        name,
        status,
    })
}

fn verb_name(v: ActionVerb) -> &'static str {
    match v {
        ActionVerb::Get => "get",
        ActionVerb::List => "list",
        ActionVerb::Create => "create",
        ActionVerb::Update => "update",
        ActionVerb::Patch => "patch",
        ActionVerb::Delete => "delete",
    }
}

fn compile_action(
    world: &World,
    s: &Scenario,
    i: usize,
    earlier: &[CompiledAction],
) -> Result<CompiledAction, ScenarioError> {
    let a = &s.actions[i];
    let p = format!("actions[{i}]");
    if a.principal.is_empty() {
        return Err(err(format!("{p}.as"), "must name a principal, e.g. alice"));
    }
    if let Some(id) = &a.id {
        if id.is_empty() || s.actions[..i].iter().any(|b| b.id.as_ref() == Some(id)) {
            return Err(err(
                format!("{p}.id"),
                format!("{id:?} is empty or used twice"),
            ));
        }
    }
    let t = resolve_target(world, &a.target).map_err(|m| err(format!("{p}.target"), m))?;
    let verb = verb_name(a.verb);
    let needs_name = !matches!(a.verb, ActionVerb::Create | ActionVerb::List);
    if needs_name && t.name.is_empty() {
        return Err(err(
            format!("{p}.target"),
            format!("{verb} needs an object: {}", a.target.clone() + "/<name>"),
        ));
    }
    if matches!(
        a.verb,
        ActionVerb::Create | ActionVerb::List | ActionVerb::Delete
    ) && t.status
    {
        return Err(err(
            format!("{p}.target"),
            format!("{verb} is not served on /status"),
        ));
    }
    if a.verb == ActionVerb::List && !t.name.is_empty() {
        return Err(err(
            format!("{p}.target"),
            "list takes a resource and optionally a namespace, not a name",
        ));
    }
    let field_unused = |field: &str| err(format!("{p}.{field}"), format!("is not used by {verb}"));
    let body_from = match &a.body_from {
        None => None,
        Some(_) if a.verb != ActionVerb::Update => return Err(field_unused("bodyFrom")),
        Some(id) => match s.actions[..i]
            .iter()
            .position(|b| b.id.as_ref() == Some(id))
        {
            Some(j) if earlier[j].key.is_some() => Some(j),
            Some(_) => {
                return Err(err(
                    format!("{p}.bodyFrom"),
                    format!("action {id:?} does not name one object"),
                ))
            }
            None => {
                return Err(err(
                    format!("{p}.bodyFrom"),
                    format!("no earlier action has id {id:?}"),
                ))
            }
        },
    };
    let ns = t.namespace.clone();
    let gr = t.info.gr.clone();
    let principal = a.principal.as_str();
    let mut request = match a.verb {
        ActionVerb::Get => ApiRequest::get(principal, gr, &ns, &t.name),
        ActionVerb::List => ApiRequest::list(principal, gr, &ns, None),
        ActionVerb::Delete => match &a.body {
            Some(b) => ApiRequest::delete_with_options(principal, gr, &ns, &t.name, b.clone()),
            None => ApiRequest::delete(principal, gr, &ns, &t.name),
        },
        ActionVerb::Create => {
            let Some(mut body) = a.body.clone() else {
                return Err(err(format!("{p}.body"), "create needs a body (the object)"));
            };
            if !body.is_object() {
                return Err(err(format!("{p}.body"), "must be an object"));
            }
            if !t.name.is_empty() {
                let name = util::name(&body).to_owned();
                if name.is_empty() {
                    let Some(obj) = body.as_object_mut() else {
                        return Err(err(format!("{p}.body"), "must be an object"));
                    };
                    let meta = obj
                        .entry("metadata")
                        .or_insert_with(|| Value::Object(Default::default()));
                    let Some(meta) = meta.as_object_mut() else {
                        return Err(err(format!("{p}.body.metadata"), "must be an object"));
                    };
                    meta.insert("name".into(), Value::String(t.name.clone()));
                } else if name != t.name {
                    return Err(err(
                        format!("{p}.body"),
                        format!(
                            "metadata.name {name:?} differs from the target's name {:?}",
                            t.name
                        ),
                    ));
                }
            }
            ApiRequest::create(principal, gr, &ns, body)
        }
        ActionVerb::Update => {
            let body = match (&a.body, body_from) {
                (Some(b), None) if b.is_object() => b.clone(),
                (Some(_), None) => return Err(err(format!("{p}.body"), "must be an object")),
                (None, Some(_)) => Value::Null,
                (Some(_), Some(_)) => {
                    return Err(err(format!("{p}.body"), "give body or bodyFrom, not both"))
                }
                (None, None) => {
                    return Err(err(
                        format!("{p}.body"),
                        "update needs a body (or bodyFrom: <action id>)",
                    ))
                }
            };
            let mut r = ApiRequest::update(principal, gr, &ns, &t.name, body);
            if t.status {
                r.subresource = Some(crate::api::Subresource::Status);
            }
            r
        }
        ActionVerb::Patch => {
            let Some(patch) = a.patch.clone() else {
                return Err(err(format!("{p}.patch"), "patch needs a patch"));
            };
            let kind = match a.patch_type {
                PatchKind::Merge => {
                    if !patch.is_object() {
                        return Err(err(format!("{p}.patch"), "a merge patch is an object"));
                    }
                    PatchType::Merge
                }
                PatchKind::Json => {
                    if !patch.is_array() {
                        return Err(err(
                            format!("{p}.patch"),
                            "a JSON patch is a list of operations",
                        ));
                    }
                    PatchType::Json
                }
            };
            let mut r = ApiRequest::patch(principal, gr, &ns, &t.name, kind, patch);
            if t.status {
                r.subresource = Some(crate::api::Subresource::Status);
            }
            r
        }
    };
    if a.verb == ActionVerb::Get && t.status {
        request.subresource = Some(crate::api::Subresource::Status);
    }
    if a.body.is_some()
        && matches!(
            a.verb,
            ActionVerb::Get | ActionVerb::List | ActionVerb::Patch
        )
    {
        return Err(field_unused("body"));
    }
    let edit = match (&a.patch, a.verb) {
        (_, ActionVerb::Patch) => None,
        (Some(p2), ActionVerb::Update) if body_from.is_some() => {
            if !p2.is_object() {
                return Err(err(format!("{p}.patch"), "a merge patch is an object"));
            }
            Some(p2.clone())
        }
        (Some(_), _) => return Err(field_unused("patch")),
        (None, _) => None,
    };
    if a.patch_type != PatchKind::Merge && a.verb != ActionVerb::Patch {
        return Err(field_unused("patchType"));
    }
    let key = t.key().or_else(|| {
        (a.verb == ActionVerb::Create)
            .then(|| a.body.as_ref().map(|b| util::name(b).to_owned()))
            .flatten()
            .filter(|n| !n.is_empty())
            .map(|n| ObjectKey::new(t.info.gr.clone(), &t.namespace, &n))
    });
    Ok(CompiledAction {
        index: i,
        id: a.id.clone(),
        at_ms: a.at.ms(),
        request,
        key,
        body_from,
        edit,
        label: format!("{verb} {} as {}", a.target, a.principal),
    })
}

fn compile_expectation(
    world: &World,
    s: &Scenario,
    i: usize,
    e: &Expectation,
    actions: &[CompiledAction],
) -> Result<CompiledExpectation, ScenarioError> {
    let p = format!("expect[{i}]");
    let unused = |field: &str, why: &str| err(format!("{p}.{field}"), why.to_owned());
    if let Some(id) = &e.action {
        if e.target.is_some() {
            return Err(unused("target", "give target or action, not both"));
        }
        for (f, set) in [
            ("at", e.at.is_some()),
            ("within", e.within.is_some()),
            ("after", e.after.is_some()),
            ("kstatus", e.kstatus.is_some()),
            ("field", e.field.is_some()),
            ("equals", e.equals.is_some()),
            ("condition", e.condition.is_some()),
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("exists", e.exists.is_some()),
            ("atLeast", e.at_least.is_some()),
            ("atMost", e.at_most.is_some()),
            ("matches", e.matches.is_some()),
            ("always", e.always.is_some()),
            ("never", e.never.is_some()),
            ("count", e.count.is_some()),
            ("requests", e.requests.is_some()),
        ] {
            if set {
                return Err(unused(
                    f,
                    "is not used with action: an action's response is checked when it is sent (use code and message)",
                ));
            }
        }
        let Some(j) = s.actions.iter().position(|a| a.id.as_ref() == Some(id)) else {
            return Err(err(
                format!("{p}.action"),
                format!("no action has id {id:?}"),
            ));
        };
        if e.code.is_none() && e.message.is_none() {
            return Err(err(&p, "an action expectation needs code and/or message"));
        }
        let mut description = format!("action {id} ({}) answers", actions[j].label);
        if let Some(c) = e.code {
            description.push_str(&format!(" {c}"));
        }
        if let Some(m) = &e.message {
            description.push_str(&format!(" {m:?}"));
        }
        return Ok(CompiledExpectation {
            key: None,
            check: Check::Response {
                action: j,
                code: e.code,
                message: e.message.clone(),
            },
            when: When::OnAction,
            mode: Mode::Eventually,
            description,
        });
    }
    if [e.target.is_some(), e.count.is_some(), e.requests.is_some()]
        .iter()
        .filter(|x| **x)
        .count()
        > 1
    {
        return Err(err(&p, "give one of target, count, requests"));
    }
    if e.count.is_some() || e.requests.is_some() {
        return compile_tally(world, e, &p);
    }
    let Some(target) = &e.target else {
        return Err(err(&p, "names neither a target (an object) nor an action"));
    };
    let t = resolve_target(world, target).map_err(|m| err(format!("{p}.target"), m))?;
    if t.status {
        return Err(err(
            format!("{p}.target"),
            "expectations look at the whole object: drop /status",
        ));
    }
    let Some(key) = t.key() else {
        return Err(err(format!("{p}.target"), "needs an object name"));
    };
    if e.code.is_some() {
        return Err(unused(
            "code",
            "code checks an action's response: use action: <id>",
        ));
    }
    let when = when_of(e, &p)?;
    let mode = mode_of(e, &p, when)?;
    let check = object_check(e, &p)?;
    let description = describe(mode, format!("{target} {}", check_text(&check)), when);
    Ok(CompiledExpectation {
        key: Some(key),
        check,
        when,
        mode,
        description,
    })
}

/// `at` or `within` (+ `after`).
fn when_of(e: &Expectation, p: &str) -> Result<When, ScenarioError> {
    let unused = |field: &str, why: &str| err(format!("{p}.{field}"), why.to_owned());
    Ok(match (e.at, e.within) {
        (Some(_), Some(_)) => return Err(err(p, "give at or within, not both")),
        (None, None) => return Err(err(p, "needs a time: at: <time> or within: <duration>")),
        (Some(at), None) => {
            if e.after.is_some() {
                return Err(unused("after", "goes with within, not at"));
            }
            When::At(at.ms())
        }
        (None, Some(w)) => {
            let from = e.after.map_or(0, |a| a.ms());
            When::Within {
                from,
                deadline: from.saturating_add(w.ms()),
            }
        }
    })
}

/// `always` / `never`, which need a `within` window.
fn mode_of(e: &Expectation, p: &str, when: When) -> Result<Mode, ScenarioError> {
    let (always, never) = (e.always == Some(true), e.never == Some(true));
    if always && never {
        return Err(err(p, "give always or never, not both"));
    }
    let field = if always { "always" } else { "never" };
    if (always || never) && !matches!(when, When::Within { .. }) {
        return Err(err(
            format!("{p}.{field}"),
            "needs a window: within: <duration> (and after: <time>)",
        ));
    }
    Ok(if always {
        Mode::Always
    } else if never {
        Mode::Never
    } else {
        Mode::Eventually
    })
}

/// How an expectation reads: `<subject> <check> at 5s`, `always: ... within 60s after 10s`.
fn describe(mode: Mode, what: String, when: When) -> String {
    let mut description = match mode {
        Mode::Eventually => what,
        Mode::Always => format!("always: {what}"),
        Mode::Never => format!("never: {what}"),
    };
    match when {
        When::At(t) => description.push_str(&format!(" at {}", super::format::Duration(t))),
        When::Within { from, deadline } => {
            description.push_str(&format!(
                " within {}",
                super::format::Duration(deadline - from)
            ));
            if from > 0 {
                description.push_str(&format!(" after {}", super::format::Duration(from)));
            }
        }
        When::OnAction => {}
    }
    description
}

/// The bounds a count is checked against: `equals` (a whole number) or `atLeast`/`atMost`.
fn bounds_of(e: &Expectation, p: &str) -> Result<Bounds, ScenarioError> {
    let equals = match &e.equals {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|n| *n >= 0.0 && n.fract() == 0.0)
                .ok_or_else(|| err(format!("{p}.equals"), "a count equals a whole number"))?,
        ),
    };
    if equals.is_some() && (e.at_least.is_some() || e.at_most.is_some()) {
        return Err(err(p, "give equals or atLeast/atMost, not both"));
    }
    if equals.is_none() && e.at_least.is_none() && e.at_most.is_none() {
        return Err(err(p, "a count needs equals, atLeast or atMost"));
    }
    Ok(Bounds {
        equals,
        at_least: e.at_least,
        at_most: e.at_most,
    })
}

/// An expectation on a `count` of objects or on `requests` in the audit log.
fn compile_tally(
    world: &World,
    e: &Expectation,
    p: &str,
) -> Result<CompiledExpectation, ScenarioError> {
    for (f, set) in [
        ("kstatus", e.kstatus.is_some()),
        ("field", e.field.is_some()),
        ("condition", e.condition.is_some()),
        ("status", e.status.is_some()),
        ("reason", e.reason.is_some()),
        ("message", e.message.is_some()),
        ("exists", e.exists.is_some()),
        ("matches", e.matches.is_some()),
        ("code", e.code.is_some()),
    ] {
        if set {
            return Err(err(
                format!("{p}.{f}"),
                "is not used with count or requests (they take equals, atLeast, atMost)",
            ));
        }
    }
    let when = when_of(e, p)?;
    let mode = mode_of(e, p, when)?;
    let bounds = bounds_of(e, p)?;
    let (check, what) = if let Some(c) = &e.count {
        let t =
            resolve_target(world, &c.target).map_err(|m| err(format!("{p}.count.target"), m))?;
        if !t.name.is_empty() || t.status {
            return Err(err(
                format!("{p}.count.target"),
                "names a resource and its namespace (pods/default), not one object",
            ));
        }
        let selector = match &c.selector {
            None => None,
            Some(text) => Some((
                Selector::parse(text).map_err(|m| err(format!("{p}.count.selector"), m))?,
                text.clone(),
            )),
        };
        let owner = match &c.owner {
            None => None,
            Some(o) => {
                let ot =
                    resolve_target(world, o).map_err(|m| err(format!("{p}.count.owner"), m))?;
                Some(
                    ot.key()
                        .filter(|_| !ot.status)
                        .ok_or_else(|| err(format!("{p}.count.owner"), "needs an object name"))?,
                )
            }
        };
        let mut what = format!("count {}", c.target);
        if let Some((_, text)) = &selector {
            what.push_str(&format!(" with {text}"));
        }
        if let Some(o) = &c.owner {
            what.push_str(&format!(" owned by {o}"));
        }
        let check = Check::Count {
            gr: t.info.gr.clone(),
            namespace: t.namespace.clone(),
            selector,
            owner,
            bounds: bounds.clone(),
        };
        (check, what)
    } else {
        let r = e
            .requests
            .as_ref()
            .ok_or_else(|| err(p, "needs count or requests"))?;
        let (request, what) = compile_request(world, r, &format!("{p}.requests"))?;
        (
            Check::Requests {
                request,
                bounds: bounds.clone(),
            },
            format!("requests: {what}"),
        )
    };
    let description = describe(mode, format!("{what} {}", bounds.text()), when);
    Ok(CompiledExpectation {
        key: None,
        check,
        when,
        mode,
        description,
    })
}

/// The assertion of an object expectation (or lesson predicate): exactly one of `kstatus`,
/// `field` + `equals`, `condition` (+ `status`, `reason`, `message`) or `exists`.
pub(crate) fn object_check(e: &Expectation, p: &str) -> Result<Check, ScenarioError> {
    let unused = |field: &str, why: &str| err(format!("{p}.{field}"), why.to_owned());
    let kinds = [
        e.kstatus.is_some(),
        e.field.is_some(),
        e.condition.is_some(),
        e.exists.is_some(),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(err(
            p,
            "give exactly one of kstatus, field (with equals), condition, exists",
        ));
    }
    if e.field.is_none() {
        for (f, set) in [
            ("atLeast", e.at_least.is_some()),
            ("atMost", e.at_most.is_some()),
            ("matches", e.matches.is_some()),
        ] {
            if set {
                return Err(unused(f, "goes with field"));
            }
        }
    }
    let check = if let Some(k) = e.kstatus {
        for (f, set) in [
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("equals", e.equals.is_some()),
        ] {
            if set {
                return Err(unused(f, "is not used with kstatus"));
            }
        }
        Check::Kstatus {
            status: k,
            message: e.message.clone(),
        }
    } else if let Some(f) = &e.field {
        let path = FieldPath::parse(f).map_err(|m| err(format!("{p}.field"), m))?;
        let bounded = e.at_least.is_some() || e.at_most.is_some();
        let ways = [e.equals.is_some(), bounded, e.matches.is_some()];
        if ways.iter().filter(|w| **w).count() > 1 {
            return Err(err(p, "field takes one of equals, atLeast/atMost, matches"));
        }
        if let Some(m) = &e.matches {
            let pattern = regex_lite::Regex::new(m).map_err(|why| {
                err(
                    format!("{p}.matches"),
                    format!("not a regular expression: {why}"),
                )
            })?;
            return Ok(Check::Matches {
                path,
                pattern: Pattern(pattern),
            });
        }
        if bounded {
            return Ok(Check::Compare {
                path,
                bounds: Bounds {
                    equals: None,
                    at_least: e.at_least,
                    at_most: e.at_most,
                },
            });
        }
        let Some(equals) = e.equals.clone() else {
            return Err(err(format!("{p}.equals"), "field needs equals: <value>"));
        };
        for (f, set) in [
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("message", e.message.is_some()),
        ] {
            if set {
                return Err(unused(f, "is not used with field"));
            }
        }
        Check::Field { path, equals }
    } else if let Some(c) = &e.condition {
        if e.equals.is_some() {
            return Err(unused(
                "equals",
                "is not used with condition (use status, reason, message)",
            ));
        }
        Check::Condition {
            type_: c.clone(),
            status: e.status.clone(),
            reason: e.reason.clone(),
            message: e.message.clone(),
        }
    } else {
        for (f, set) in [
            ("status", e.status.is_some()),
            ("reason", e.reason.is_some()),
            ("message", e.message.is_some()),
            ("equals", e.equals.is_some()),
        ] {
            if set {
                return Err(unused(f, "is not used with exists"));
            }
        }
        Check::Exists(e.exists.unwrap_or(true))
    };
    Ok(check)
}

/// `kstatus is Current`, `status.readyReplicas equals 3`, `condition Available is True with
/// reason MinimumReplicasAvailable`, `exists`.
pub(crate) fn check_text(c: &Check) -> String {
    match c {
        Check::Kstatus { status, message } => {
            let mut s = format!("kstatus is {}", status.as_str());
            if let Some(m) = message {
                s.push_str(&format!(" with message {m:?}"));
            }
            s
        }
        Check::Field { path, equals } => format!("{} equals {equals}", path.text()),
        Check::Condition {
            type_,
            status,
            reason,
            message,
        } => {
            let mut s = format!("condition {type_}");
            let mut parts = Vec::new();
            if let Some(st) = status {
                parts.push(format!("status {st}"));
            }
            if let Some(r) = reason {
                parts.push(format!("reason {r}"));
            }
            if let Some(m) = message {
                parts.push(format!("message {m:?}"));
            }
            if parts.is_empty() {
                s.push_str(" is present");
            } else {
                s.push_str(" has ");
                s.push_str(&parts.join(", "));
            }
            s
        }
        Check::Compare { path, bounds } => format!("{} {}", path.text(), bounds.text()),
        Check::Matches { path, pattern } => {
            format!("{} matches {:?}", path.text(), pattern.0.as_str())
        }
        Check::Count { bounds, .. } | Check::Requests { bounds, .. } => bounds.text(),
        Check::Exists(true) => "exists".into(),
        Check::Exists(false) => "does not exist".into(),
        Check::Response { .. } => String::new(),
    }
}
