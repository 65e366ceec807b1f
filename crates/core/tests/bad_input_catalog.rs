//! The bad-input catalog: what users paste, and the exact line they get back.
//!
//! Each row goes the way a user's input goes: pasted text is parsed
//! (`converge_core::parse`), each object is sent as `alice` to the world's API server
//! (`ApiServer::apply_request_for`, then `World::apply`); patches go straight to the API server
//! as `alice`; scenario files go through `Scenario::load`. Every row asserts the exact text the
//! user sees, that the world's store is unchanged (same objects, byte for byte, and the same
//! resourceVersion), and (by running at all) that nothing panicked.
//!
//! To see what every row answers today: `CATALOG_PRINT=1 cargo test -p converge-core --test
//! bad_input_catalog -- --nocapture`.

use converge_core::api::{ApiRequest, GroupResource, PatchType};
use converge_core::engine::{ClusterConfig, Input, World};
use converge_core::json::json;
use converge_core::parse;
use converge_core::scenario::Scenario;
use converge_core::testkit::store_snapshot;

/// What the user hands over.
enum Given {
    /// Pasted into the editor (bytes, as a file may hold anything).
    Paste(Vec<u8>),
    /// A merge patch (`merge`) or JSON patch (`json`) on `deployments/default/web`.
    Patch(PatchType, &'static str),
    /// A scenario file.
    Scenario(String),
}

struct Row {
    name: &'static str,
    given: Given,
    /// The exact line the user sees.
    says: String,
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      containers:
        - name: app
          image: nginx:1.25
          resources:
            requests:
              cpu: 100m
              memory: 64Mi
";

/// The Deployment above with one piece of text replaced (which must be there).
fn dep(from: &str, to: &str) -> Given {
    assert!(
        DEPLOYMENT.contains(from),
        "{from:?} is not in the Deployment"
    );
    Given::Paste(DEPLOYMENT.replacen(from, to, 1).into_bytes())
}

fn paste(text: &str) -> Given {
    Given::Paste(text.as_bytes().to_vec())
}

const WIDGET: &str = "apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 1}
status:
  conditions:
";

fn widget_conditions(conditions: &str) -> Given {
    paste(&format!("{WIDGET}{conditions}"))
}

const SCENARIO: &str = "apiVersion: converge.dev/v1
kind: Scenario
name: s
actions:
  - id: scale
    at: 10s
    as: alice
    verb: patch
    target: deployments/default/web
    patch: {spec: {replicas: 3}}
";

fn scenario(from: &str, to: &str) -> Given {
    assert!(SCENARIO.contains(from), "{from:?} is not in the scenario");
    Given::Scenario(SCENARIO.replacen(from, to, 1))
}

fn row(name: &'static str, given: Given, says: impl Into<String>) -> Row {
    Row {
        name,
        given,
        says: says.into(),
    }
}

/// A world with the default cluster, a Deployment `web` and a Widget CRD without the status
/// subresource (so `status.conditions` is validated on alice's writes).
fn world() -> World {
    let mut world = World::new(ClusterConfig::default());
    let setup = [
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                          "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}}),
        converge_core::testkit::template("apps/v1", "Deployment", "web"),
    ];
    for obj in setup {
        let req = world
            .api()
            .create_request_for("admin", obj)
            .expect("set-up kind known");
        let report = world.apply(Input::Request { request: req });
        let rec = report.requests().next().expect("one request");
        assert_eq!(rec.code, 201, "set-up refused: {}", rec.message);
    }
    world
}

/// Sends the input the way the user's action does and returns the line the user sees.
fn user_sees(world: &mut World, given: &Given) -> String {
    match given {
        Given::Paste(bytes) => {
            let objects = match parse::parse_document_bytes(bytes) {
                Ok(o) => o,
                Err(e) => return e.to_string(),
            };
            for obj in objects {
                let req = match world.api().apply_request_for("alice", obj) {
                    Ok(r) => r,
                    Err(e) => return format!("{} {}", e.code(), e.message),
                };
                let report = world.apply(Input::Request { request: req });
                let Some(rec) = report.requests().next() else {
                    return "no request was sent".into();
                };
                if rec.code >= 400 {
                    return format!("{} {}", rec.code, rec.message);
                }
            }
            "accepted".into()
        }
        Given::Patch(kind, text) => {
            let patch = match parse::parse_documents(text) {
                Ok(mut p) if p.len() == 1 => p.remove(0),
                Ok(_) => return "one patch expected".into(),
                // A JSON patch is a list, which the manifest parser refuses: read it as JSON.
                Err(_) => match serde_json::from_str(text) {
                    Ok(p) => p,
                    Err(e) => return e.to_string(),
                },
            };
            let gr = GroupResource::new("apps", "deployments");
            let req = ApiRequest::patch("alice", gr, "default", "web", *kind, patch);
            let report = world.apply(Input::Request { request: req });
            let says = match report.requests().next() {
                Some(rec) if rec.code >= 400 => format!("{} {}", rec.code, rec.message),
                Some(_) => "accepted".into(),
                None => "no request was sent".into(),
            };
            says
        }
        Given::Scenario(text) => match Scenario::load(text) {
            Ok(_) => "accepted".into(),
            Err(e) => e.to_string(),
        },
    }
}

fn rows() -> Vec<Row> {
    let deep_json = format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"data\": {}1{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let deep_yaml = format!(
        "apiVersion: v1\nkind: ConfigMap\ndata: {}1{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let deep_block_yaml = {
        let mut s = String::from("apiVersion: v1\nkind: ConfigMap\ndata:\n");
        for i in 1..=150 {
            s.push_str(&format!("{}k:\n", " ".repeat(i)));
        }
        s
    };
    let over_parse_limit = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata: {{k: \"{}\"}}\n",
        "x".repeat(parse::MAX_INPUT_BYTES)
    );
    let over_body_limit = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata: {{k: \"{}\"}}\n",
        "x".repeat(4 * 1024 * 1024)
    );
    let long_name = "a".repeat(254);

    vec![
        // ---- syntax: JSON and YAML, with line:column ----
        row("JSON: a missing value", paste("{\"apiVersion\": \"v1\",\n  \"kind\": }"), "line 2, column 11: expected value"),
        row("JSON: a trailing comma", paste("{\"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n}"), "line 3, column 1: trailing comma"),
        row("JSON: an unclosed object", paste("{\"apiVersion\": \"v1\",\n  \"kind\": \"Pod\""), "line 2, column 15: EOF while parsing an object"),
        row("JSON: an unquoted key (a YAML flow mapping read as JSON, as kubectl does)", paste("{kind: Pod}"), "line 1, column 2: key must be a string"),
        row("JSON: a string with a raw newline", paste("{\"kind\": \"Po\nd\"}"), "line 2, column 1: control character (\\u0000-\\u001F) found while parsing a string"),
        row("YAML: an unclosed flow mapping", paste("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\ndata: {}\n"), "line 4, column 5: did not find expected ',' or '}', while parsing a flow mapping"),
        row("YAML: a tab used for indentation", paste("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n"), "line 4, column 1: found character that cannot start any token, while scanning for the next token"),
        row("YAML: a second colon on a line", paste("apiVersion: v1\nkind: ConfigMap: x\n"), "line 2, column 16: mapping values are not allowed in this context"),
        row("YAML: an unclosed quote", paste("apiVersion: v1\nkind: \"ConfigMap\nmetadata: {}\n"), "line 4, column 1: found unexpected end of stream, while scanning a quoted scalar"),
        row("YAML: a bad indentation", paste("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n bad: b\n"), "line 5, column 2: did not find expected key, while parsing a block mapping"),
        // ---- empty input, garbage, documents that are not objects ----
        row("empty input", paste(""), "the input is empty: no Kubernetes objects found"),
        row("only whitespace and comments", paste("  \n# nothing here\n---\n"), "the input is empty: no Kubernetes objects found"),
        row("binary garbage (NUL bytes)", Given::Paste(b"\x00\x01\x02garbage".to_vec()), "line 1, column 1: control character U+0000 is not allowed (binary data?)"),
        row("bytes that are not UTF-8", Given::Paste(b"kind: Pod\n\xff\xfe\xfd".to_vec()), "line 2, column 1: the input is not UTF-8 text (binary data?)"),
        row("a plain string", paste("hello world\n"), "line 1, column 1: the document is a string, expected a Kubernetes object (a mapping)"),
        row("a YAML list", paste("- a\n- b\n"), "line 1, column 1: the document is a list, expected a Kubernetes object (a mapping)"),
        row("a JSON number", paste("42"), "line 1, column 1: the document is a number, expected a Kubernetes object (a mapping)"),
        row("a List item that is not an object", paste("apiVersion: v1\nkind: List\nitems:\n- 3\n"), "document 1: items[0] is an integer, expected a Kubernetes object (a mapping)"),
        // ---- size and depth limits ----
        row("a document over the 8 MiB input limit", paste(&over_parse_limit), format!("the input is {} bytes; the limit is 8388608 bytes (8 MiB)", over_parse_limit.len())),
        row("an object over the API server's 3 MiB body limit", paste(&over_body_limit), "400 Request entity too large: limit is 3145728"),
        row("JSON nested 10,000 levels", paste(&deep_json), "line 1, column 150: nesting is deeper than the limit of 100 levels"),
        row("YAML flow nested 10,000 levels", paste(&deep_yaml), "line 3, column 106: data[0][0][0][0][0][0][0][0][0][0][0][0]...[0][0][0][0][0][0][0][0][0][0][0][0][0]: nesting is deeper than the limit of 100 levels"),
        row("YAML block nested 150 levels", paste(&deep_block_yaml), "line 103, column 101: data.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k....k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k.k: nesting is deeper than the limit of 100 levels"),
        // ---- numbers JSON cannot hold ----
        row("YAML .nan", dep("replicas: 2", "replicas: .nan"), "line 7, column 13: spec.replicas: NaN and infinite numbers are not allowed (JSON cannot hold them)"),
        row("YAML .inf", dep("replicas: 2", "replicas: .inf"), "line 7, column 13: spec.replicas: NaN and infinite numbers are not allowed (JSON cannot hold them)"),
        row("YAML -.Inf in a label", dep("app: shop\n  template", "app: -.Inf\n  template"), "line 10, column 12: spec.selector.matchLabels.app: NaN and infinite numbers are not allowed (JSON cannot hold them)"),
        // ---- duplicate keys ----
        row("a duplicate key in YAML metadata", dep("  name: shop\n", "  name: shop\n  name: shop2\n"), "line 5, column 3: metadata: duplicate key \"name\""),
        row("a duplicate top-level key in JSON", paste("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"kind\": \"Secret\"}"), "line 2, column 7: duplicate key \"kind\""),
        row("a duplicate label key", dep("      app: shop\n  template", "      app: shop\n      app: other\n  template"), "line 11, column 7: spec.selector.matchLabels: duplicate key \"app\""),
        // ---- apiVersion, kind, metadata ----
        row("no apiVersion", dep("apiVersion: apps/v1\n", ""), "400 Object 'apiVersion' is missing in '{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"shop\",\"namespace\":\"default\"},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":{\"a...'"),
        row("no kind", dep("kind: Deployment\n", ""), "400 Object 'Kind' is missing in '{\"apiVersion\":\"apps/v1\",\"metadata\":{\"name\":\"shop\",\"namespace\":\"default\"},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":...'"),
        row("an unknown apiVersion", dep("apiVersion: apps/v1", "apiVersion: apps/v2"), "400 no matches for kind \"Deployment\" in version \"apps/v2\""),
        row("an unknown kind", dep("kind: Deployment", "kind: Deploymnt"), "400 no matches for kind \"Deploymnt\" in version \"apps/v1\""),
        row("apiVersion is a number", dep("apiVersion: apps/v1", "apiVersion: 1"), "400 json: cannot unmarshal 1 into Go struct field .apiVersion of type string"),
        row("no metadata", paste("apiVersion: v1\nkind: ConfigMap\ndata: {k: v}\n"), "422 ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required"),
        row("no metadata.name", dep("  name: shop\n", ""), "422 Deployment.apps \"\" is invalid: metadata.name: Required value: name or generateName is required"),
        row("an empty metadata.name", dep("  name: shop\n", "  name: \"\"\n"), "422 Deployment.apps \"\" is invalid: metadata.name: Required value: name or generateName is required"),
        // ---- names (DNS-1123) ----
        row("a name with capitals", dep("name: shop", "name: Shop"), "422 Deployment.apps \"Shop\" is invalid: metadata.name: Invalid value: \"Shop\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        row("a name with an underscore", dep("name: shop", "name: my_shop"), "422 Deployment.apps \"my_shop\" is invalid: metadata.name: Invalid value: \"my_shop\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        row("a name starting with a dash", dep("name: shop", "name: \"-shop\""), "422 Deployment.apps \"-shop\" is invalid: metadata.name: Invalid value: \"-shop\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        row("a name of 254 characters", dep("name: shop", &format!("name: {long_name}")), format!("422 Deployment.apps \"{long_name}\" is invalid: metadata.name: Invalid value: \"{long_name}\": must be no more than 253 characters")),
        row("a Service name with a dot (DNS-1035 label)", paste("apiVersion: v1\nkind: Service\nmetadata: {name: my.svc}\nspec: {ports: [{port: 80}]}\n"), "422 Service \"my.svc\" is invalid: metadata.name: Invalid value: \"my.svc\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
        row("a namespace that does not exist", dep("namespace: default", "namespace: nope"), "404 namespaces \"nope\" not found"),
        row("a label value with a space", dep("      app: shop\n  template", "      app: my shop\n  template"), "422 Deployment.apps \"shop\" is invalid: [spec.selector.matchLabels: Invalid value: \"my shop\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"shop\"}: `selector` does not match template `labels`]"),
        // ---- wrong types at every level of a Deployment ----
        row("metadata is a string", paste("apiVersion: apps/v1\nkind: Deployment\nmetadata: shop\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field metadata of type v1.ObjectMeta"),
        row("metadata.labels is a list", dep("  namespace: default\n", "  namespace: default\n  labels: [a, b]\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
        row("spec is a list", paste("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\nspec: [1, 2]\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal array into Go struct field Deployment.spec of type v1.DeploymentSpec"),
        row("spec.replicas is a string", dep("replicas: 2", "replicas: two"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
        row("spec.replicas is a fraction", dep("replicas: 2", "replicas: 1.5"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"),
        row("spec.selector is a string", dep("  selector:\n    matchLabels:\n      app: shop\n", "  selector: app=shop\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.selector of type v1.LabelSelector"),
        row("spec.selector.matchLabels is a list", dep("    matchLabels:\n      app: shop\n", "    matchLabels: [app, shop]\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal array into Go struct field LabelSelector.spec.selector.matchLabels of type map[string]string"),
        row("spec.template is a string", paste("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\nspec:\n  selector: {matchLabels: {app: shop}}\n  template: shop\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec"),
        row("spec.template.spec.containers is a mapping", dep("      containers:\n        - name: app", "      containers:\n          name: app"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"),
        row("a container is a string", paste("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: shop}\nspec:\n  selector: {matchLabels: {app: shop}}\n  template:\n    metadata: {labels: {app: shop}}\n    spec: {containers: [nginx]}\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers of type v1.Container"),
        row("a container image is a number", dep("image: nginx:1.25", "image: 125"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number 125 into Go struct field Container.spec.template.spec.containers.image of type string"),
        row("container resources is a list", dep("          resources:\n            requests:\n              cpu: 100m\n              memory: 64Mi\n", "          resources: [cpu]\n"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal array into Go struct field Container.spec.template.spec.containers.resources of type v1.ResourceRequirements"),
        // ---- quantities ----
        row("a cpu request that is not a quantity", dep("cpu: 100m", "cpu: lots"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        row("a cpu request with two decimal points", dep("cpu: 100m", "cpu: 1.5.5"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        row("a memory request with an unknown suffix", dep("memory: 64Mi", "memory: 64Mx"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        row("a negative memory request", dep("memory: 64Mi", "memory: -64Mi"), "422 Deployment.apps \"shop\" is invalid: spec.template.spec.containers[0].resources.requests[memory]: Invalid value: \"-64Mi\": must be greater than or equal to 0"),
        // ---- replicas ----
        row("negative replicas", dep("replicas: 2", "replicas: -1"), "422 Deployment.apps \"shop\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        row("replicas over the simulator's cap of 10,000", dep("replicas: 2", "replicas: 10001"), "422 Deployment.apps \"shop\" is invalid: spec.replicas: Invalid value: 10001: must be less than or equal to 10000 (the simulator's per-object replica cap)"),
        row("replicas over int32", dep("replicas: 2", "replicas: 99999999999"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number 99999999999 into Go struct field DeploymentSpec.spec.replicas of type int32"),
        // ---- other Deployment validation ----
        row("a selector that does not match the template labels", dep("        app: shop\n    spec", "        app: other\n    spec"), "422 Deployment.apps \"shop\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`"),
        row("an empty selector", dep("    matchLabels:\n      app: shop\n", "    matchLabels: {}\n"), "422 Deployment.apps \"shop\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment"),
        row("no containers", dep("      containers:\n        - name: app\n          image: nginx:1.25\n          resources:\n            requests:\n              cpu: 100m\n              memory: 64Mi\n", "      containers: []\n"), "422 Deployment.apps \"shop\" is invalid: spec.template.spec.containers: Required value"),
        row("a container without a name", dep("        - name: app\n          image", "        - image"), "422 Deployment.apps \"shop\" is invalid: spec.template.spec.containers[0].name: Required value"),
        row("a container without an image", dep("          image: nginx:1.25\n", ""), "422 Deployment.apps \"shop\" is invalid: spec.template.spec.containers[0].image: Required value"),
        // ---- conditions on a custom resource ----
        row("duplicate condition types", widget_conditions("  - {type: Ready, status: \"True\", reason: Ok, message: \"\", lastTransitionTime: \"2025-01-01T00:00:00Z\"}\n  - {type: Ready, status: \"False\", reason: Down, message: \"\", lastTransitionTime: \"2025-01-01T00:00:00Z\"}\n"), "422 Widget.example.com \"w1\" is invalid: status.conditions[1].type: Duplicate value: \"Ready\""),
        row("a condition status that is not True/False/Unknown", widget_conditions("  - {type: Ready, status: \"Yes\", reason: Ok, message: \"\", lastTransitionTime: \"2025-01-01T00:00:00Z\"}\n"), "422 Widget.example.com \"w1\" is invalid: status.conditions[0].status: Unsupported value: \"Yes\": supported values: \"True\", \"False\", \"Unknown\""),
        row("a condition reason that is not CamelCase", widget_conditions("  - {type: Ready, status: \"True\", reason: \"all good!\", message: \"\", lastTransitionTime: \"2025-01-01T00:00:00Z\"}\n"), "422 Widget.example.com \"w1\" is invalid: status.conditions[0].reason: Invalid value: \"all good!\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"),
        row("a condition without a type", widget_conditions("  - {status: \"True\", reason: Ok, message: \"\", lastTransitionTime: \"2025-01-01T00:00:00Z\"}\n"), "422 Widget.example.com \"w1\" is invalid: status.conditions[0].type: Required value: must be set"),
        // ---- patches and permissions ----
        row("a merge patch to negative replicas", Given::Patch(PatchType::Merge, "{\"spec\": {\"replicas\": -3}}"), "422 Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0"),
        row("a merge patch with a string for replicas", Given::Patch(PatchType::Merge, "{\"spec\": {\"replicas\": \"3\"}}"), "400 Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
        row("a JSON patch whose test fails", Given::Patch(PatchType::Json, "[{\"op\": \"test\", \"path\": \"/spec/replicas\", \"value\": 7}]"), "422 the server rejected our request due to an error in our request: operation '/0' failed at path '/spec/replicas': value did not match"),
        row("a JSON patch removing a path that is not there", Given::Patch(PatchType::Json, "[{\"op\": \"remove\", \"path\": \"/spec/nope\"}]"), "422 the server rejected our request due to an error in our request: operation '/0' failed at path '/spec/nope': path is invalid"),
        row("a JSON patch that is not a list", Given::Patch(PatchType::Json, "{\"op\": \"add\"}"), "400 invalid JSON patch: invalid type: map, expected a sequence"),
        row("alice creating a Node", paste("apiVersion: v1\nkind: Node\nmetadata: {name: node-9}\n"), "403 nodes is forbidden: User \"alice\" cannot create resource \"nodes\" in API group \"\" at the cluster scope"),
        // ---- scenario files ----
        row("scenario: empty file", Given::Scenario(String::new()), "the file is empty: a scenario starts with `apiVersion: converge.dev/v1` and `kind: Scenario`"),
        row("scenario: a newer version", scenario("converge.dev/v1", "converge.dev/v2"), "line 1, column 13: apiVersion: unsupported version \"converge.dev/v2\": this converge reads converge.dev/v1"),
        row("scenario: a misspelt field", scenario("    as: alice", "    principle: alice"), "line 7, column 5: actions[0]: unknown field `principle`, expected one of `id`, `at`, `as`, `verb`, `target`, `body`, `bodyFrom`, `patch`, `patchType`"),
        row("scenario: a negative time", scenario("at: 10s", "at: -5s"), "line 6, column 9: actions[0].at: negative time \"-5s\": times count from the scenario start, 0s"),
        row("scenario: a time without a unit", scenario("at: 10s", "at: 10"), "line 6, column 9: actions[0].at: 10 has no unit: write 10ms or 10s"),
        row("scenario: a time over 24h", scenario("at: 10s", "at: 25h"), "line 6, column 9: actions[0].at: \"25h\" is longer than a scenario may run (24h of simulated time)"),
        row("scenario: an unknown verb", scenario("verb: patch", "verb: frob"), "line 8, column 11: actions[0].verb: unknown variant `frob`, expected one of `get`, `list`, `create`, `update`, `patch`, `delete`"),
        row("scenario: an unknown resource", scenario("target: deployments/default/web", "target: deploymentz/default/web"), "line 9, column 13: actions[0].target: unknown resource \"deploymentz\" in target \"deploymentz/default/web\""),
        row("scenario: a YAML syntax error", scenario("patch: {spec: {replicas: 3}}", "patch: {spec: {replicas: 3}"), "line 11, column 1: did not find expected ',' or '}', while parsing a flow mapping"),
        row("scenario: an object the API server refuses", Given::Scenario(format!("{SCENARIO}objects:\n  - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: Bad_Name}}}}\n")), "line 12, column 5: objects[0]: creating it failed: 422 ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        row("scenario: a malformed expectation path", Given::Scenario(format!("{SCENARIO}expect:\n  - {{target: deployments/default/web, at: 1s, field: \"status..x\", equals: 1}}\n")), "line 12, column 54: expect[0].field: malformed path \"status..x\": empty segment"),
    ]
}

#[test]
fn every_bad_input_gets_its_exact_message_and_changes_nothing() {
    let rows = rows();
    assert!(rows.len() >= 60, "the catalog has {} rows", rows.len());
    let print = std::env::var_os("CATALOG_PRINT").is_some();
    let base = world();
    let mut failures = Vec::new();
    for row in &rows {
        let mut world = base.clone();
        let before = store_snapshot(world.api());
        let says = user_sees(&mut world, &row.given);
        let after = store_snapshot(world.api());
        if print {
            println!("{:?} => {:?}", row.name, says);
        }
        if says != row.says {
            failures.push(format!(
                "{}:\n  expected: {:?}\n  got:      {:?}",
                row.name, row.says, says
            ));
        }
        if before != after {
            failures.push(format!("{}: the store changed", row.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_catalog_world_accepts_the_unbroken_inputs() {
    let mut w = world();
    assert_eq!(user_sees(&mut w, &paste(DEPLOYMENT)), "accepted");
    let mut w = world();
    assert_eq!(
        user_sees(&mut w, &widget_conditions("  - {type: Ready, status: \"True\", reason: Ok, message: \"\", lastTransitionTime: \"2025-01-01T00:00:00Z\"}\n")),
        "accepted"
    );
    assert_eq!(
        user_sees(&mut w, &Given::Scenario(SCENARIO.to_string())),
        "accepted"
    );
}
