use super::*;
use callbench_dynproto::{find_method, load_protos};

const SHOP: &str = r#"
syntax = "proto3";
package shop.v1;
import "google/api/annotations.proto";

service Shop {
  rpc GetBook(GetBookRequest) returns (Book) { option (google.api.http) = { get: "/v1/{name=shelves/*/books/*}" }; }
  rpc ListBooks(ListBooksRequest) returns (Book) { option (google.api.http) = { get: "/v1/shelves/{shelf}/books" }; }
  rpc CreateBook(CreateBookRequest) returns (Book) {
    option (google.api.http) = { post: "/v1/shelves/{shelf}/books" body: "book" };
  }
  rpc UpdateBook(Book) returns (Book) {
    option (google.api.http) = { patch: "/v1/books/{id}" body: "*" response_body: "title" };
  }
  rpc Tag(Book) returns (Book) { option (google.api.http) = { post: "/v1/books/{title}:tag" }; }
  rpc Custom(Book) returns (Book) { option (google.api.http) = { custom: { kind: "HEAD" path: "/v1/books/{id}" } }; }
  rpc NoRule(Book) returns (Book);
}

message GetBookRequest { string name = 1; }
message ListBooksRequest { int64 shelf = 1; int32 page_size = 2; repeated string tags = 3; Filter filter = 4; }
message Filter { string author = 1; }
message CreateBookRequest { int64 shelf = 1; Book book = 2; string request_id = 3; }
message Book { int64 id = 1; string title = 2; string author_name = 3; }
"#;

fn twin(method: &str, request: &str) -> Result<RestCall, TranscodeError> {
    // A new folder per call (the tests run side by side), removed also when a test fails.
    let dir = callbench_primitives::scratch::ScratchDir::new("callbench-http-rule").unwrap();
    let file = dir.join("shop.proto");
    std::fs::write(&file, SHOP).unwrap();
    let pool = load_protos(&[file], &[dir.path().to_path_buf()]).unwrap();
    rest_twin(&find_method(&pool, &format!("shop.v1.Shop/{method}")).unwrap(), request)
}

fn body(call: &RestCall) -> Value {
    serde_json::from_str(call.body.as_deref().expect("a body")).unwrap()
}

#[test]
fn the_path_is_filled_from_the_message_and_a_multi_segment_variable_keeps_its_slashes() {
    let call = twin("GetBook", r#"{"name": "shelves/1/books/a b"}"#).unwrap();
    assert_eq!((call.method.as_str(), call.path.as_str(), call.body), ("GET", "/v1/shelves/1/books/a%20b", None));
    assert_eq!(twin("Tag", r#"{"title": "x/y"}"#).unwrap().path, "/v1/books/x%2Fy:tag", "one segment escapes '/'");
}

#[test]
fn fields_bound_to_neither_path_nor_body_go_into_the_query() {
    let request = r#"{"shelf": 7, "pageSize": 10, "tags": ["a b", "c"], "filter": {"author": "x"}}"#;
    let call = twin("ListBooks", request).unwrap();
    assert_eq!(call.path, "/v1/shelves/7/books?filter.author=x&page_size=10&tags=a%20b&tags=c");
    assert_eq!(call.body, None);
}

#[test]
fn a_body_field_is_sent_as_the_body_and_the_rest_as_query() {
    let call =
        twin("CreateBook", r#"{"shelf": "7", "book": {"title": "T", "authorName": "A"}, "requestId": "r1"}"#).unwrap();
    assert_eq!((call.method.as_str(), call.path.as_str()), ("POST", "/v1/shelves/7/books?request_id=r1"));
    assert_eq!(body(&call), serde_json::json!({"title": "T", "authorName": "A"}));
}

#[test]
fn body_star_sends_the_message_but_its_path_fields() {
    let call = twin("UpdateBook", r#"{"id": 3, "title": "T", "author_name": "A"}"#).unwrap();
    assert_eq!((call.method.as_str(), call.path.as_str()), ("PATCH", "/v1/books/3"));
    assert_eq!(body(&call), serde_json::json!({"title": "T", "author_name": "A"}));
    assert_eq!(call.response_body.as_deref(), Some("title"));
    let custom = twin("Custom", r#"{"id": 3}"#).unwrap();
    assert_eq!((custom.method.as_str(), custom.path.as_str()), ("HEAD", "/v1/books/3"));
}

#[test]
fn a_method_without_a_rule_or_a_path_field_is_one_line() {
    let e = twin("NoRule", "{}").unwrap_err();
    assert!(matches!(e, TranscodeError::Method(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("shop.v1.Shop.NoRule has no google.api.http rule") && !e.contains('\n'), "{e}");
    let e = twin("GetBook", "{}").unwrap_err();
    assert!(matches!(e, TranscodeError::Message(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("the path needs field 'name'") && !e.contains('\n'), "{e}");
    let e = twin("GetBook", r#"{"nope": 1}"#).unwrap_err().to_string();
    assert!(e.contains("request JSON for shop.v1.GetBookRequest"), "{e}");
}
