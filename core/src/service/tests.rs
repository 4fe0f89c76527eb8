use alloc::string::{String, ToString};
use alloc::vec::Vec;
use alloc::{format, vec};

use serde_json::Value;

use super::*;

const DOCUMENT: &str = r#"{"format": "shardroute/1", "epoch": 9,
    "nodes": [{"id": "a", "address": "10.0.0.1:5432"}, {"id": "b"}, {"id": "c", "address": "10.0.0.3:5432", "weight": 2}],
    "strategy": {"type": "ring", "points_per_node": 40}}"#;

fn service_of(document: &str) -> Service {
    Service::new(Router::from_json(document).unwrap())
}

fn json_of(response: &Response) -> Value {
    serde_json::from_slice(&response.body).unwrap()
}

/// `{"shard", "node", "address"?}` as the router gives it.
fn expected(router: &Router, key: Key<'_>) -> Value {
    let shard = router.route(key).unwrap();
    let node = router.node(key).unwrap();
    let mut answer = serde_json::json!({"shard": shard, "node": node});
    let address = router.nodes().iter().find(|each| each.id == node).unwrap().address.clone();
    if let Some(address) = address {
        answer["address"] = address.into();
    }
    answer
}

/// `text` form-urlencoded, every byte but unreserved ones escaped.
fn encoded(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn get_answers_what_the_router_answers_with_the_epoch_and_etag() {
    let service = service_of(DOCUMENT);
    let router = service.router().clone();
    for i in 0..3000u32 {
        let key = format!("user:{i} é/&=+?");
        let response = service.answer(&Request::get(&format!("/route?key={}", encoded(key.as_bytes()))));
        assert_eq!(response.status, 200, "{key}");
        let mut want = expected(&router, Key::from(key.as_str()));
        want["epoch"] = 9.into();
        assert_eq!(json_of(&response), want, "{key}");
        assert_eq!(response.header("etag"), Some(service.etag()));
        assert_eq!(response.header("content-type"), Some("application/json"));
    }
    // `+` is a space; the form may come first.
    let plus = service.answer(&Request::get("/route?form=text&key=a+b"));
    assert_eq!(json_of(&plus)["shard"], router.route("a b").unwrap());
    // Every node appears, with and without an address.
    let nodes: Vec<Value> = (0..200)
        .map(|i| json_of(&service.answer(&Request::get(&format!("/route?key=k{i}"))))["node"].clone())
        .collect();
    for id in ["a", "b", "c"] {
        assert!(nodes.contains(&Value::from(id)), "{id}");
    }
}

#[test]
fn get_reads_hex_and_u64_keys_and_the_documents_key_type() {
    let service = service_of(DOCUMENT);
    let router = service.router().clone();
    for i in 0..500u64 {
        let bytes = [0xFF, 0x00, i as u8, 0x80];
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let answer = json_of(&service.answer(&Request::get(&format!("/route?key={hex}&form=hex"))));
        assert_eq!(answer["shard"], expected(&router, Key::Bytes(&bytes))["shard"]);
        let upper = json_of(&service.answer(&Request::get(&format!("/route?key={}&form=hex", hex.to_uppercase()))));
        assert_eq!(upper, answer);
        let id = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let answer = json_of(&service.answer(&Request::get(&format!("/route?key={id}&form=u64"))));
        assert_eq!(answer["shard"], expected(&router, Key::U64(id))["shard"]);
    }
    // Under hashing.keys u64 a text key is its integer; other text is refused.
    let typed = DOCUMENT.replace(r#""epoch": 9,"#, r#""epoch": 9, "hashing": {"keys": "u64"},"#);
    let service = service_of(&typed);
    let router = service.router().clone();
    let answer = json_of(&service.answer(&Request::get("/route?key=12345")));
    assert_eq!(answer["shard"], router.route(Key::U64(12345)).unwrap());
    let refused = service.answer(&Request::get("/route?key=0123"));
    assert_eq!((refused.status, refused.code()), (400, Some("invalid_key")));
    assert_eq!(json_of(&refused)["error"]["message"], router.route("0123").unwrap_err().message());
}

#[test]
fn post_answers_a_batch_in_order_as_the_router_does() {
    let service = service_of(DOCUMENT);
    let router = service.router().clone();
    let keys: Vec<String> = (0..super::MAX_SERVICE_KEYS).map(|i| format!("order:{i}")).collect();
    let body = serde_json::json!({"keys": keys}).to_string();
    let response = service.answer(&Request::post("/route", body.as_bytes()));
    assert_eq!(response.status, 200);
    let answer = json_of(&response);
    assert_eq!(answer["epoch"], 9);
    let answers = answer["answers"].as_array().unwrap();
    assert_eq!(answers.len(), keys.len());
    for (key, got) in keys.iter().zip(answers) {
        assert_eq!(*got, expected(&router, Key::from(key.as_str())), "{key}");
    }
    // An integer and its text are different keys under form text; u64 reads both as the
    // integer; hex strings are bytes.
    let mixed = service.answer(&Request::post("/route", br#"{"keys": [7, "7", 18446744073709551615]}"#));
    let mixed = json_of(&mixed);
    assert_eq!(mixed["answers"][0], expected(&router, Key::U64(7)));
    assert_eq!(mixed["answers"][1], expected(&router, Key::from("7")));
    assert_eq!(mixed["answers"][2], expected(&router, Key::U64(u64::MAX)));
    let typed = json_of(&service.answer(&Request::post("/route", br#"{"keys": [7, "7"], "form": "u64"}"#)));
    assert_eq!(typed["answers"][0], typed["answers"][1]);
    assert_eq!(typed["answers"][0], expected(&router, Key::U64(7)));
    let hex = json_of(&service.answer(&Request::post("/route", br#"{"form": "hex", "keys": ["ff00", ""]}"#)));
    assert_eq!(hex["answers"][0], expected(&router, Key::Bytes(&[0xFF, 0])));
    assert_eq!(hex["answers"][1], expected(&router, Key::Bytes(b"")));
    let empty = json_of(&service.answer(&Request::post("/route", br#"{"keys": []}"#)));
    assert_eq!(empty, serde_json::json!({"epoch": 9, "answers": []}));
}

#[test]
fn if_none_match_with_the_tag_is_304_and_the_tag_follows_the_document() {
    let service = service_of(DOCUMENT);
    let tag = service.etag().to_string();
    assert!(tag.starts_with("\"route-9-") && tag.ends_with('"'), "{tag}");
    for held in [tag.clone(), format!("W/{tag}"), format!("\"other\", {tag}"), "*".to_string()] {
        let mut request = Request::get("/route?key=x");
        request.if_none_match = Some(&held);
        let response = service.answer(&request);
        assert_eq!((response.status, response.body.len()), (304, 0), "{held}");
        assert_eq!(response.header("etag"), Some(tag.as_str()));
    }
    let mut request = Request::get("/route?key=x");
    request.if_none_match = Some("\"route-9-00000000\"");
    assert_eq!(service.answer(&request).status, 200);
    // Another document at the same epoch: another tag.
    let other = service_of(&DOCUMENT.replace("\"points_per_node\": 40", "\"points_per_node\": 41"));
    assert_ne!(other.etag(), service.etag());
    assert_eq!(Service::new(service.router().clone()).etag(), service.etag());
}

/// `(status, code, message)` of an answer.
fn refused(service: &Service, request: Request<'_>) -> (u16, String, String) {
    let response = service.answer(&request);
    let body = json_of(&response);
    assert_eq!(body["error"]["code"].as_str(), response.code(), "{body}");
    if response.status != 413 || !request.body.is_empty() {
        assert_eq!(body["epoch"], 9, "{body}");
    }
    (
        response.status,
        body["error"]["code"].as_str().unwrap().to_string(),
        body["error"]["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn hostile_gets_are_refused_with_a_code_and_a_status() {
    let service = service_of(DOCUMENT);
    let cases: &[(&str, u16, &str, &str)] = &[
        ("/route?key=%FF", 400, "invalid_key", "text key is not valid UTF-8 at byte 0"),
        ("/route?key=ab%ED%A0%80", 400, "invalid_key", "not valid UTF-8 at byte 2"),
        ("/route?key=abc&form=hex", 400, "invalid_key", "even number of hex digits"),
        ("/route?key=zz&form=hex", 400, "invalid_key", "even number of hex digits"),
        ("/route?key=-1&form=u64", 400, "invalid_key", "not a decimal integer"),
        ("/route?key=18446744073709551616&form=u64", 400, "invalid_key", "not a decimal integer"),
        ("/route?key=%FF&form=u64", 400, "invalid_key", "not a decimal integer"),
        ("/route?key=a%2", 400, "invalid_argument", "not followed by two hex digits"),
        ("/route?key=a%zz", 400, "invalid_argument", "not followed by two hex digits"),
        ("/route?key=a&key=b", 400, "invalid_argument", "given twice"),
        ("/route?key=a&x=1", 400, "invalid_argument", "unknown query parameter \"x\""),
        ("/route?key=a&form=base64", 400, "invalid_argument", "unknown form \"base64\""),
        ("/route", 400, "invalid_argument", "needs a key"),
        ("/route?form=text", 400, "invalid_argument", "needs a key"),
        ("/routes?key=a", 404, "invalid_argument", "no endpoint at \"/routes\""),
        ("/", 404, "invalid_argument", "no endpoint"),
    ];
    for (target, status, code, message) in cases {
        let (got_status, got_code, got_message) = refused(&service, Request::get(target));
        assert_eq!((got_status, got_code.as_str()), (*status, *code), "{target}: {got_message}");
        assert!(got_message.contains(message), "{target}: {got_message}");
    }
    // An empty key is a key.
    assert_eq!(service.answer(&Request::get("/route?key=")).status, 200);
    for method in ["PUT", "DELETE", "HEAD", "get"] {
        let request = Request { method, ..Request::get("/route?key=a") };
        let response = service.answer(&request);
        assert_eq!((response.status, response.code()), (405, Some("invalid_argument")), "{method}");
        assert_eq!(response.header("allow"), Some(ALLOW));
    }
}

#[test]
fn hostile_batches_are_refused_whole_with_a_code_and_a_status() {
    let service = service_of(DOCUMENT);
    let too_many = serde_json::json!({"keys": vec!["k"; super::MAX_SERVICE_KEYS as usize + 1]}).to_string();
    let deep = format!("{{\"keys\": {}{}}}", "[".repeat(200), "]".repeat(200));
    let cases: Vec<(&[u8], u16, &str, &str)> = vec![
        (br#"{"keys": ["ok", "\ud800"]}"#, 400, "invalid_key", "not valid Unicode"),
        (br#"{"keys": ["\udc00x"]}"#, 400, "invalid_key", "not valid Unicode"),
        (b"{\"keys\": [\"a\xFFb\"]}", 400, "invalid_key", "not UTF-8 at byte 12"),
        (br#"{"keys": ["a", -1]}"#, 400, "invalid_key", "keys[1]: number key -1 is not an integer"),
        (br#"{"keys": [1.5]}"#, 400, "invalid_key", "keys[0]: number key 1.5"),
        (br#"{"keys": [18446744073709551616]}"#, 400, "invalid_key", "keys[0]: number key"),
        (br#"{"keys": ["a", null]}"#, 400, "invalid_key", "keys[1]: expected a string or an integer, found null"),
        (br#"{"keys": [["a"]]}"#, 400, "invalid_key", "keys[0]: expected a string or an integer, found an array"),
        (br#"{"keys": [7], "form": "hex"}"#, 400, "invalid_key", "keys[0]: expected a hex string"),
        (br#"{"keys": ["x7"], "form": "u64"}"#, 400, "invalid_key", "keys[0]: \"x7\" is not a decimal integer"),
        (br#"{"keys": "a"}"#, 400, "invalid_argument", "keys: expected an array, found a string"),
        (br#"{"key": ["a"]}"#, 400, "invalid_argument", "key: unknown field; expected one of: keys, form"),
        (br#"{"form": "text"}"#, 400, "invalid_argument", "keys: missing required field"),
        (br#"{"keys": [], "form": "bytes"}"#, 400, "invalid_argument", "unknown form \"bytes\""),
        (br#"{"keys": [], "keys": []}"#, 400, "invalid_argument", "appears twice"),
        (br#"["a"]"#, 400, "invalid_argument", "expected an object, found an array"),
        (b"{\"keys\": [", 400, "invalid_argument", "not valid JSON"),
        (b"", 400, "invalid_argument", "not valid JSON"),
        (br#"{"keys": []} {}"#, 400, "invalid_argument", "not valid JSON"),
        (too_many.as_bytes(), 413, "limit_exceeded", "10001 keys exceeds the limit of 10000"),
        (deep.as_bytes(), 413, "limit_exceeded", "MAX_JSON_NESTING"),
    ];
    for (body, status, code, message) in cases {
        let (got_status, got_code, got_message) = refused(&service, Request::post("/route", body));
        let shown = String::from_utf8_lossy(&body[..body.len().min(60)]).to_string();
        assert_eq!((got_status, got_code.as_str()), (status, code), "{shown}: {got_message}");
        assert!(got_message.contains(message), "{shown}: {got_message}");
    }
    let (status, code, message) = refused(&service, Request::post("/route?form=hex", br#"{"keys": []}"#));
    assert_eq!((status, code.as_str()), (400, "invalid_argument"), "{message}");
    // A body past the limit is refused by its length, as a shell refuses it unread.
    let big = vec![b' '; super::MAX_SERVICE_BODY_BYTES as usize + 1];
    let response = service.answer(&Request::post("/route", &big));
    assert_eq!(response, body_too_large(big.len() as u64));
    assert_eq!((response.status, response.code()), (413, Some("limit_exceeded")));
    // One byte under it is parsed (and, being spaces, is not JSON).
    assert_eq!(service.answer(&Request::post("/route", &big[1..])).status, 400);
}

#[test]
fn a_key_the_strategy_refuses_refuses_the_batch_naming_it() {
    let typed = DOCUMENT.replace(r#""epoch": 9,"#, r#""epoch": 9, "hashing": {"keys": "u64"},"#);
    let service = service_of(&typed);
    let (status, code, message) = refused(&service, Request::post("/route", br#"{"keys": ["1", 2, "three"]}"#));
    assert_eq!((status, code.as_str()), (400, "invalid_key"));
    assert!(message.starts_with("keys[2]: key \"three\" is not a u64"), "{message}");
}

#[test]
fn unavailable_and_helpers() {
    let response = unavailable();
    assert_eq!((response.status, response.code()), (503, Some("unavailable")));
    assert_eq!(response.header("retry-after"), Some("1"));
    assert!(handles("/route") && handles("/route?key=a") && !handles("/") && !handles("/route/"));
    let answer = service_of(DOCUMENT).answer(&Request::get("/route?key=a"));
    assert_eq!(answer.code(), None);
}

#[test]
fn a_body_past_its_deadline_is_408_and_closes() {
    let response = body_timed_out();
    assert_eq!((response.status, response.code()), (408, Some("unavailable")));
    assert_eq!(response.header("connection"), Some("close"));
    assert_eq!(response.header("cache-control"), Some("no-store"));
}
