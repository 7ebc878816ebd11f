//! Tests of [`Table`], [`Column`] and [`Dtype`].

use super::*;

fn t(s: &str) -> Value {
    Value::Text(s.into())
}

/// name | n | x, three rows.
fn sample() -> Table {
    Table::from_rows(
        "ops",
        &["name", "n", "x"],
        vec![
            vec![t("a"), Value::Int(1), Value::Float(0.5)],
            vec![t("b"), Value::Int(2), Value::Null],
            vec![t("c"), Value::Int(3), Value::Float(2.0)],
        ],
    )
}

#[test]
fn build_and_access() {
    let tb = sample();
    assert_eq!(tb.nrows(), 3);
    assert_eq!(tb.ncols(), 3);
    assert_eq!(tb.column_names(), ["name", "n", "x"]);
    assert_eq!(tb.column_index("x"), Some(2));
    assert_eq!(tb.column_index("y"), None);
    assert_eq!(tb.column("n").unwrap().values[1], Value::Int(2));
    assert_eq!(tb.value(2, 0), &t("c"));
    let row = tb.row(1);
    assert_eq!(row.index(), 1);
    assert_eq!(row.len(), 3);
    assert_eq!(row.get(0), &t("b"));
    assert_eq!(row.get_named("x"), Some(&Value::Null));
    assert_eq!(row.get_named("nope"), None);
    assert_eq!(row.to_vec(), vec![t("b"), Value::Int(2), Value::Null]);
    let firsts: Vec<&Value> = tb.rows().map(|r| r.get(0)).collect();
    assert_eq!(firsts, [&t("a"), &t("b"), &t("c")]);
    let cells: Vec<&Value> = tb.row(2).into_iter().collect();
    assert_eq!(cells, [&t("c"), &Value::Int(3), &Value::Float(2.0)]);
}

#[test]
fn empty_tables() {
    let tb = Table::new("e", &["a", "b"]);
    assert_eq!(tb.nrows(), 0);
    assert_eq!(tb.rows().count(), 0);
    let none = Table::new("none", &[]);
    assert_eq!((none.nrows(), none.ncols()), (0, 0));
    assert_eq!(Table::default().column_names(), Vec::<&str>::new());
}

#[test]
fn from_columns_and_push_column() {
    let mut tb = Table::from_columns(
        "t",
        vec![
            Column::new("a", vec![Value::Int(1), Value::Int(2)]),
            Column::new("b", vec![t("x"), t("y")]),
        ],
    );
    assert_eq!(tb.nrows(), 2);
    tb.push_column(Column::new("c", vec![Value::Null, Value::Bool(true)]));
    assert_eq!(
        tb.row(1).to_vec(),
        [Value::Int(2), t("y"), Value::Bool(true)]
    );
    let mut bare = Table::new("bare", &[]);
    bare.push_column(Column::new("a", vec![Value::Int(1)]));
    assert_eq!(bare.nrows(), 1);
}

#[test]
#[should_panic(expected = "column")]
fn from_columns_refuses_ragged_columns() {
    Table::from_columns(
        "t",
        vec![
            Column::new("a", vec![Value::Int(1)]),
            Column::new("b", vec![]),
        ],
    );
}

#[test]
#[should_panic(expected = "row width")]
fn push_row_refuses_wrong_width() {
    sample().push_row(vec![t("d")]);
}

#[test]
#[should_panic(expected = "length differs")]
fn push_column_refuses_wrong_length() {
    sample().push_column(Column::new("z", vec![Value::Int(1)]));
}

#[test]
fn take_rows_in_given_order() {
    let tb = sample().take_rows(&[2, 0, 2]);
    assert_eq!(tb.name, "ops");
    assert_eq!(tb.column_names(), ["name", "n", "x"]);
    assert_eq!(tb.column("name").unwrap().values, [t("c"), t("a"), t("c")]);
    assert_eq!(sample().take_rows(&[]).nrows(), 0);
}

#[test]
fn select_and_drop_columns() {
    let mut tb = sample();
    tb.select_columns(&[2, 0]);
    assert_eq!(tb.column_names(), ["x", "name"]);
    assert_eq!(tb.row(0).to_vec(), [Value::Float(0.5), t("a")]);
    let mut tb = sample();
    tb.select_columns(&[1, 1]);
    assert_eq!(tb.column_names(), ["n", "n"]);
    assert_eq!(tb.columns[0], tb.columns[1]);
    let mut tb = sample();
    tb.drop_columns(&["n", "missing"]);
    assert_eq!(tb.column_names(), ["name", "x"]);
}

#[test]
fn retain_rows_by_predicate() {
    let mut tb = sample();
    tb.retain_rows(|r| !r.get(2).is_missing());
    assert_eq!(tb.column("name").unwrap().values, [t("a"), t("c")]);
    assert_eq!(
        tb.column("n").unwrap().values,
        [Value::Int(1), Value::Int(3)]
    );
}

#[test]
fn sort_desc_stable_missing_last() {
    // pandas: sort_values("v", ascending=False, kind="stable") on
    // [1, NaN, 3, 1.0, None, 3] gives rows 2, 5, 0, 3, 1, 4.
    let mut tb = Table::from_columns(
        "s",
        vec![
            Column::new("i", (0..6).map(Value::Int).collect()),
            Column::new(
                "v",
                vec![
                    Value::Int(1),
                    Value::Float(f64::NAN),
                    Value::Int(3),
                    Value::Float(1.0),
                    Value::Null,
                    Value::Int(3),
                ],
            ),
        ],
    );
    tb.sort_desc_by(1);
    let order: Vec<i64> = tb.columns[0]
        .values
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    assert_eq!(order, [2, 5, 0, 3, 1, 4]);
}

#[test]
fn sort_desc_text_before_numbers() {
    // Descending in the key order: text sorts above numbers.
    let mut tb = Table::from_columns(
        "s",
        vec![Column::new(
            "v",
            vec![
                Value::Int(5),
                t("b"),
                Value::Null,
                t("a"),
                Value::Float(9.5),
            ],
        )],
    );
    tb.sort_desc_by(0);
    assert_eq!(
        tb.columns[0].values,
        [
            t("b"),
            t("a"),
            Value::Float(9.5),
            Value::Int(5),
            Value::Null
        ]
    );
}

#[test]
fn dtypes_are_exact() {
    let col = |v: Vec<Value>| Column::new("c", v).dtype();
    assert_eq!(col(vec![]), Dtype::Empty);
    assert_eq!(col(vec![Value::Null, Value::Null]), Dtype::Empty);
    assert_eq!(col(vec![Value::Int(1), Value::Null]), Dtype::Int);
    assert_eq!(col(vec![Value::Float(f64::NAN)]), Dtype::Float);
    assert_eq!(col(vec![Value::Int(1), Value::Float(1.0)]), Dtype::Object);
    assert_eq!(col(vec![Value::Bool(true), Value::Null]), Dtype::Bool);
    assert_eq!(col(vec![t("a"), t("b")]), Dtype::Text);
    assert_eq!(col(vec![Value::Py("(1,)".into())]), Dtype::Py);
    assert_eq!(
        col(vec![t("(1,)"), Value::Py("(1,)".into())]),
        Dtype::Object
    );
    let c = Column::new("c", vec![]);
    assert!(c.is_empty());
    assert_eq!(c.len(), 0);
}

#[test]
fn column_mut_edits_in_place() {
    let mut tb = sample();
    tb.column_mut("n").unwrap().values[0] = Value::Int(10);
    assert_eq!(tb.value(0, 1), &Value::Int(10));
    assert!(tb.column_mut("zz").is_none());
}

#[test]
fn shared_texts_keep_one_allocation_per_distinct_text() {
    let mut texts = SharedTexts::default();
    let a = texts.share("ampere_sgemm");
    let b = texts.share(&String::from("ampere_sgemm"));
    let c = texts.share("ampere_hgemm");
    assert!(std::sync::Arc::ptr_eq(&a, &b), "equal texts share one");
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
    assert_eq!((&*a, &*c), ("ampere_sgemm", "ampere_hgemm"));
    // Cells of either kind read as their text, sharing it too.
    let (Value::Text(t), Value::Py(p)) = (texts.text("ampere_sgemm"), texts.py("(1, 2)")) else {
        panic!("a text cell and a repr cell");
    };
    assert!(std::sync::Arc::ptr_eq(&t, &a));
    assert_eq!(&*p, "(1, 2)");
}
