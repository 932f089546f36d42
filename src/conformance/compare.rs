//! Comparing a result with a recorded one, as conformance/FORMAT.md says: the server's raw
//! children order is unspecified (only the sorted `children` count), and the events of one
//! atomic server step come in no defined order (event lists are compared as multisets), but a
//! session's state changes do (Disconnected comes before the Expired an expiry ends with), so
//! their order is compared too.

use serde_json::Value;

/// Every way `actual` differs from `expected`, one line each (empty: they match).
pub fn differences(expected: &Value, actual: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let (Some(want), Some(got)) = (expected["results"].as_array(), actual["results"].as_array()) else {
        return vec!["a result file needs a `results` array".to_string()];
    };
    if want.len() != got.len() {
        out.push(format!("{} results recorded, {} produced", want.len(), got.len()));
    }
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let (w, g) = (normalize(w), normalize(g));
        if w != g {
            out.push(format!("op {i}: expected {w}, got {g}"));
        }
    }
    out
}

fn normalize(result: &Value) -> Value {
    let mut result = result.clone();
    if let Some(fields) = result.as_object_mut() {
        fields.remove("raw");
        fields.remove("raw_sorted");
        if let Some(Value::Array(events)) = fields.get_mut("events") {
            let states: Vec<Value> = events.iter().filter_map(|e| e.get("state").cloned()).collect();
            events.sort_by_key(|e| e.to_string());
            if !states.is_empty() {
                fields.insert("states in order".into(), Value::Array(states));
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::differences;
    use serde_json::json;

    fn events(list: serde_json::Value) -> serde_json::Value {
        json!({ "results": [{ "i": 0, "op": "events", "ok": true, "events": list }] })
    }

    #[test]
    fn notifications_compare_as_a_set_and_state_changes_in_order() {
        let deleted = |path: &str| json!({ "type": "NodeDeleted", "path": path, "via": [] });
        let a = events(json!([deleted("/a"), deleted("/b")]));
        let b = events(json!([deleted("/b"), deleted("/a")]));
        assert!(differences(&a, &b).is_empty(), "one step's notifications in either order");
        let disconnected = json!({ "type": "None", "state": "Disconnected", "via": [] });
        let expired = json!({ "state": "Expired" });
        let first = events(json!([disconnected.clone(), expired.clone()]));
        let last = events(json!([expired, disconnected]));
        assert_eq!(differences(&first, &last).len(), 1, "Expired before Disconnected is a difference");
    }
}
