//! EndpointSlices (`discovery.k8s.io/v1`), as kube 1.32's
//! pkg/registry/discovery/endpointslice/strategy.go, pkg/apis/discovery/v1/defaults.go
//! (`SetDefaults_EndpointPort`) and pkg/apis/discovery/validation (`ValidateEndpointSliceCreate`,
//! `ValidateEndpointSliceUpdate`) define them. No status; the generation starts at 1 and goes up
//! when anything but the metadata changes, or the labels do.

use crate::api::meta::Fields;
use std::collections::BTreeSet;

use crate::json::{json, Value};

use super::super::meta::JsonPointer;
use super::super::typed::{FieldTypes, Ty};
use super::super::validation::{
    dns1123_label, dns1123_subdomain, push_all, qualified_name, FieldError, Ip,
};
use super::common::{default_field, immutable};
use super::{KindStrategy, ResourceInfo};

/// The `EndpointSlice` strategy.
pub(crate) struct EndpointSliceStrategy;

/// `supportedAddressTypes`.
const ADDRESS_TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
/// `supportedPortProtocols`.
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20_000;
const MAX_ENDPOINTS: usize = 1000;

impl KindStrategy for EndpointSliceStrategy {
    fn field_types(&self) -> FieldTypes {
        &[
            ("/addressType", Ty::Str, "EndpointSlice.addressType"),
            (
                "/endpoints",
                Ty::Array("[]v1.Endpoint"),
                "EndpointSlice.endpoints",
            ),
            (
                "/ports",
                Ty::Array("[]v1.EndpointPort"),
                "EndpointSlice.ports",
            ),
        ]
    }

    fn has_generation(&self) -> bool {
        true
    }

    /// `SetDefaults_EndpointPort`: an unnamed port is named `""`, the protocol is TCP.
    fn defaults(&self, obj: &mut Value) {
        let Some(ports) = obj.get_mut("ports").and_then(Value::as_array_mut) else {
            return;
        };
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            default_field(p, "name", json!(""));
            default_field(p, "protocol", json!("TCP"));
        }
    }

    fn validate(&self, _info: &ResourceInfo, obj: &Value, errs: &mut Vec<FieldError>) {
        validate_endpoint_slice(obj, ADDRESS_TYPES, errs);
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        old: &Value,
        new: &Value,
        errs: &mut Vec<FieldError>,
    ) {
        // ValidateEndpointSliceUpdate also accepts the deprecated `IP` type, which only slices
        // stored before discovery/v1 carry; none can exist here, so the create set applies.
        immutable(old, new, "/addressType", "addressType", errs);
    }

    /// `PrepareForUpdate`: the generation goes up when anything but the metadata changed, or the
    /// labels did.
    fn generation_bumps(&self, old: &Value, new: &Value) -> bool {
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                m.remove("metadata");
            }
            v
        };
        strip(old) != strip(new) || old.at("/metadata/labels") != new.at("/metadata/labels")
    }
}

fn str_field<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `ValidateEndpointSlice` without the metadata (the server validates that for every kind):
/// address type, endpoints, ports.
fn validate_endpoint_slice(obj: &Value, address_types: &[&str], errs: &mut Vec<FieldError>) {
    let address_type = str_field(obj, "addressType");
    if address_type.is_empty() {
        errs.push(FieldError::required("addressType", ""));
    } else if !address_types.contains(&address_type) {
        errs.push(FieldError::not_supported(
            "addressType",
            json!(address_type),
            address_types,
        ));
    }
    validate_endpoints(obj.field("endpoints"), address_type, errs);
    validate_ports(obj.field("ports"), errs);
}

/// The list at `v` (absent and `null` are empty), or an error naming the field.
fn list<'a>(v: Option<&'a Value>, field: &str, errs: &mut Vec<FieldError>) -> &'a [Value] {
    match v {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a,
        Some(other) => {
            errs.push(FieldError::invalid(field, other.clone(), "must be a list"));
            &[]
        }
    }
}

/// A string field of a list element, or an error naming it when it is not a string.
fn string_at<'a>(
    v: &'a Value,
    key: &str,
    field: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'a str> {
    match v.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            errs.push(FieldError::invalid(
                format!("{field}.{key}"),
                other.clone(),
                "must be a string",
            ));
            None
        }
    }
}

/// `validateEndpoints`.
fn validate_endpoints(v: Option<&Value>, address_type: &str, errs: &mut Vec<FieldError>) {
    let endpoints = list(v, "endpoints", errs);
    if endpoints.len() > MAX_ENDPOINTS {
        errs.push(FieldError::too_many(
            "endpoints",
            endpoints.len(),
            MAX_ENDPOINTS,
        ));
        return;
    }
    for (i, ep) in endpoints.iter().enumerate() {
        let path = format!("endpoints[{i}]");
        if !ep.is_object() {
            errs.push(FieldError::invalid(path, ep.clone(), "must be an object"));
            continue;
        }
        let addr_path = format!("{path}.addresses");
        let addresses = list(ep.field("addresses"), &addr_path, errs);
        if addresses.is_empty() {
            errs.push(FieldError::required(
                &addr_path,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errs.push(FieldError::too_many(
                &addr_path,
                addresses.len(),
                MAX_ADDRESSES,
            ));
        }
        for (j, a) in addresses.iter().enumerate() {
            let field = format!("{addr_path}[{j}]");
            let Some(address) = a.as_str() else {
                errs.push(FieldError::invalid(field, a.clone(), "must be a string"));
                continue;
            };
            validate_address(address, address_type, &field, errs);
        }
        if let Some(node) = string_at(ep, "nodeName", &path, errs) {
            // ValidateNodeName: a DNS-1123 subdomain.
            for msg in dns1123_subdomain(node) {
                errs.push(FieldError::invalid(
                    format!("{path}.nodeName"),
                    json!(node),
                    msg,
                ));
            }
        }
        if let Some(hostname) = string_at(ep, "hostname", &path, errs) {
            push_all(
                errs,
                &format!("{path}.hostname"),
                hostname,
                dns1123_label(hostname),
            );
        }
        if let Some(c) = ep.field("conditions").filter(|c| !c.is_null()) {
            for k in ["ready", "serving", "terminating"] {
                match c.get(k) {
                    None | Some(Value::Null) | Some(Value::Bool(_)) => {}
                    Some(other) => errs.push(FieldError::invalid(
                        format!("{path}.conditions.{k}"),
                        other.clone(),
                        "must be a boolean",
                    )),
                }
            }
        }
    }
}

/// The address rules of one `addressType` (unknown types are not checked, as in kube).
fn validate_address(address: &str, address_type: &str, field: &str, errs: &mut Vec<FieldError>) {
    let invalid = |errs: &mut Vec<FieldError>, msg: &str| {
        errs.push(FieldError::invalid(field, json!(address), msg));
    };
    match address_type {
        "IPv4" | "IPv6" | "IP" => {
            let parsed = Ip::parse(address);
            let family_ok = matches!(
                (address_type, parsed),
                ("IPv4", Some(Ip::V4(_))) | ("IPv6", Some(Ip::V6(_))) | ("IP", Some(_))
            );
            if !family_ok {
                // IsValidIPv4Address / IsValidIPv6Address / IsValidIP.
                invalid(
                    errs,
                    match address_type {
                        "IPv4" => "must be a valid IPv4 address",
                        "IPv6" => "must be a valid IPv6 address",
                        _ => "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    },
                );
            }
            if address_type == "IP" {
                return;
            }
            // ValidateNonSpecialIP.
            let Some(ip) = parsed else {
                invalid(errs, "must be a valid IP address");
                return;
            };
            // IsUnspecified, IsLoopback, IsLinkLocalUnicast, IsLinkLocalMulticast.
            let (unspecified, loopback, link_local, link_local_multicast) = match ip {
                Ip::V4(o) => (
                    o == [0; 4],
                    o[0] == 127,
                    o[..2] == [169, 254],
                    o[..3] == [224, 0, 0],
                ),
                Ip::V6(g) => (
                    g == [0; 8],
                    g == [0, 0, 0, 0, 0, 0, 0, 1],
                    (g[0] & 0xffc0) == 0xfe80,
                    (g[0] & 0xff0f) == 0xff02,
                ),
            };
            if unspecified {
                invalid(errs, &format!("may not be unspecified ({address})"));
            }
            if loopback {
                invalid(
                    errs,
                    "may not be in the loopback range (127.0.0.0/8, ::1/128)",
                );
            }
            if link_local {
                invalid(
                    errs,
                    "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                );
            }
            if link_local_multicast {
                invalid(
                    errs,
                    "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
                );
            }
        }
        "FQDN" => {
            // IsFullyQualifiedDomainName.
            let name = address.strip_suffix('.').unwrap_or(address);
            if name.is_empty() {
                errs.push(FieldError::required(field, ""));
                return;
            }
            if name.split('.').count() < 2 {
                invalid(
                    errs,
                    "should be a domain with at least two segments separated by dots",
                );
            }
            for msg in dns1123_subdomain(name) {
                invalid(errs, &msg);
            }
        }
        _ => {}
    }
}

/// `validatePorts`.
fn validate_ports(v: Option<&Value>, errs: &mut Vec<FieldError>) {
    let ports = list(v, "ports", errs);
    if ports.len() > MAX_PORTS {
        errs.push(FieldError::too_many("ports", ports.len(), MAX_PORTS));
        return;
    }
    let mut names = BTreeSet::new();
    for (i, p) in ports.iter().enumerate() {
        let path = format!("ports[{i}]");
        if !p.is_object() {
            errs.push(FieldError::invalid(path, p.clone(), "must be an object"));
            continue;
        }
        let name = string_at(p, "name", &path, errs).unwrap_or("");
        if !name.is_empty() {
            push_all(errs, &format!("{path}.name"), name, dns1123_label(name));
        }
        if !names.insert(name.to_owned()) {
            errs.push(FieldError::duplicate(format!("{path}.name"), json!(name)));
        }
        match string_at(p, "protocol", &path, errs) {
            None => errs.push(FieldError::required(format!("{path}.protocol"), "")),
            Some(proto) if !PROTOCOLS.contains(&proto) => errs.push(FieldError::not_supported(
                format!("{path}.protocol"),
                json!(proto),
                PROTOCOLS,
            )),
            Some(_) => {}
        }
        match p.field("port") {
            None | Some(Value::Null) => {}
            Some(n) if n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => {}
            Some(other) => errs.push(FieldError::invalid(
                format!("{path}.port"),
                other.clone(),
                "must be an int32",
            )),
        }
        if let Some(app) = string_at(p, "appProtocol", &path, errs) {
            for msg in qualified_name(app) {
                errs.push(FieldError::invalid(
                    format!("{path}.appProtocol"),
                    json!(app),
                    msg,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(obj: &Value) -> Vec<String> {
        let mut errs = Vec::new();
        validate_endpoint_slice(obj, ADDRESS_TYPES, &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn address_type_is_required_and_one_of_kubes() {
        assert_eq!(errors(&json!({})), ["addressType: Required value"]);
        assert_eq!(
            errors(&json!({"addressType": "IPX"})),
            ["addressType: Unsupported value: \"IPX\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""]
        );
        assert!(
            errors(&json!({"addressType": "IPv4", "endpoints": null, "ports": null})).is_empty()
        );
    }

    #[test]
    fn endpoints_need_addresses_of_the_slices_family() {
        let slice = json!({"addressType": "IPv4", "endpoints": [
            {"addresses": []},
            {"addresses": ["10.244.1.2"], "nodeName": "node-1", "conditions": {"ready": true}},
            {"addresses": ["fd00::1"]},
            {"addresses": ["127.0.0.1"]},
        ]});
        assert_eq!(
            errors(&slice),
            [
                "endpoints[0].addresses: Required value: must contain at least 1 address",
                "endpoints[2].addresses[0]: Invalid value: \"fd00::1\": must be a valid IPv4 address",
                "endpoints[3].addresses[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
            ]
        );
    }

    /// `netip.ParseAddr`'s forms: no leading zeros or short IPv4, one `::`, an IPv4 tail.
    #[test]
    fn ip_addresses_parse_as_gos() {
        assert_eq!(Ip::parse("10.244.1.2"), Some(Ip::V4([10, 244, 1, 2])));
        for bad in [
            "10.244.1",
            "010.1.1.1",
            "256.1.1.1",
            "1.2.3.4.5",
            "1..2.3",
            ":::",
            "1::2::3",
            "12345::",
            "",
        ] {
            assert_eq!(Ip::parse(bad), None, "{bad}");
        }
        assert_eq!(Ip::parse("::1"), Some(Ip::V6([0, 0, 0, 0, 0, 0, 0, 1])));
        assert_eq!(
            Ip::parse("fd00::10.0.0.1"),
            Some(Ip::V6([0xfd00, 0, 0, 0, 0, 0, 0x0a00, 0x0001]))
        );
        assert_eq!(Ip::parse("1:2:3:4:5:6:7:8").map(Ip::is_v6), Some(true));
        assert_eq!(Ip::parse("1:2:3:4:5:6:7"), None);
        let slice = json!({"addressType": "IPv6", "endpoints": [{"addresses": ["::", "fe80::1", "ff02::2", "fd00::1"]}]});
        assert_eq!(
            errors(&slice),
            [
                "endpoints[0].addresses[0]: Invalid value: \"::\": may not be unspecified (::)",
                "endpoints[0].addresses[1]: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "endpoints[0].addresses[2]: Invalid value: \"ff02::2\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            ]
        );
    }

    #[test]
    fn ports_are_named_once_with_a_supported_protocol() {
        let slice = json!({"addressType": "IPv4", "ports": [
            {"name": "http", "protocol": "TCP", "port": 80},
            {"name": "http", "protocol": "HTTP", "port": 8080},
        ]});
        assert_eq!(
            errors(&slice),
            [
                "ports[1].name: Duplicate value: \"http\"",
                "ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
            ]
        );
    }

    #[test]
    fn the_address_type_is_immutable_and_labels_bump_the_generation() {
        let info = crate::api::kinds::Registry::builtin()
            .for_kind("discovery.k8s.io/v1", "EndpointSlice")
            .cloned()
            .unwrap();
        let old = json!({"metadata": {"labels": {"a": "1"}}, "addressType": "IPv4"});
        let mut new = json!({"metadata": {"labels": {"a": "1"}}, "addressType": "IPv6"});
        let mut errs = Vec::new();
        EndpointSliceStrategy.validate_update(&info, &old, &new, &mut errs);
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["addressType: Invalid value: \"IPv6\": field is immutable"]
        );
        assert!(EndpointSliceStrategy.generation_bumps(&old, &new));
        new["addressType"] = json!("IPv4");
        assert!(!EndpointSliceStrategy.generation_bumps(&old, &new));
        new["metadata"]["annotations"] = json!({"x": "y"});
        assert!(!EndpointSliceStrategy.generation_bumps(&old, &new));
        new["metadata"]["labels"]["a"] = json!("2");
        assert!(EndpointSliceStrategy.generation_bumps(&old, &new));
    }
}
