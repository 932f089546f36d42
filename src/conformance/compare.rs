//! Comparing a result with a recorded one, as conformance/FORMAT.md says: the server's raw
//! children order is unspecified (only the sorted `children` count), and the events of one
//! atomic server step come in no defined order (event lists are compared as multisets).

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
            events.sort_by_key(|e| e.to_string());
        }
    }
    result
}
