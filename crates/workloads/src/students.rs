//! Seed 002's students workload: a list of two student records.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub country: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Student {
    pub id: i64,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub age: i32,
    pub gpa: f64,
    pub enrolled: bool,
    pub major: String,
    pub courses: Vec<String>,
    pub address: Option<Address>,
    pub enrollment_date: String,
    pub phone: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct ListStudentsResponse {
    pub students: Vec<Student>,
}

/// The two records, built on every call as a handler returning fresh data would.
pub fn list() -> ListStudentsResponse {
    let courses = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
    ListStudentsResponse {
        students: vec![
            Student {
                id: 1,
                first_name: "Emily".into(),
                last_name: "Johnson".into(),
                email: "emily.johnson@example.edu".into(),
                age: 20,
                gpa: 3.8,
                enrolled: true,
                major: "Computer Science".into(),
                courses: courses(&["Data Structures", "Operating Systems", "Linear Algebra", "Databases"]),
                address: Some(Address {
                    street: "1420 Maple Avenue".into(),
                    city: "Springfield".into(),
                    state: "IL".into(),
                    postal_code: "62704".into(),
                    country: "USA".into(),
                }),
                enrollment_date: "2023-09-01".into(),
                phone: "+1-217-555-0142".into(),
            },
            Student {
                id: 2,
                first_name: "Michael".into(),
                last_name: "Chen".into(),
                email: "michael.chen@example.edu".into(),
                age: 22,
                gpa: 3.45,
                enrolled: true,
                major: "Mechanical Engineering".into(),
                courses: courses(&["Thermodynamics", "Fluid Mechanics", "Materials Science", "Calculus III"]),
                address: Some(Address {
                    street: "87 Oak Street, Apt 3B".into(),
                    city: "Madison".into(),
                    state: "WI".into(),
                    postal_code: "53703".into(),
                    country: "USA".into(),
                }),
                enrollment_date: "2021-09-01".into(),
                phone: "+1-608-555-0187".into(),
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_records_of_realistic_size() {
        let list = super::list();
        assert_eq!(list.students.len(), 2);
        // Seed 002's JSON was 1190 bytes; ours is of the same order.
        let len = serde_json::to_string(&list).unwrap().len();
        assert!((600..1600).contains(&len), "{len}");
    }
}
