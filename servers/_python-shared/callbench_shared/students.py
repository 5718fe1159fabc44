"""Seed 002's students workload: a list of two student records."""


def list_students() -> list[dict]:
    """The two records (proto field names), built on every call as a handler returning fresh data would."""
    return [
        {
            "id": 1,
            "first_name": "Emily",
            "last_name": "Johnson",
            "email": "emily.johnson@example.edu",
            "age": 20,
            "gpa": 3.8,
            "enrolled": True,
            "major": "Computer Science",
            "courses": ["Data Structures", "Operating Systems", "Linear Algebra", "Databases"],
            "address": {
                "street": "1420 Maple Avenue",
                "city": "Springfield",
                "state": "IL",
                "postal_code": "62704",
                "country": "USA",
            },
            "enrollment_date": "2023-09-01",
            "phone": "+1-217-555-0142",
        },
        {
            "id": 2,
            "first_name": "Michael",
            "last_name": "Chen",
            "email": "michael.chen@example.edu",
            "age": 22,
            "gpa": 3.45,
            "enrolled": True,
            "major": "Mechanical Engineering",
            "courses": ["Thermodynamics", "Fluid Mechanics", "Materials Science", "Calculus III"],
            "address": {
                "street": "87 Oak Street, Apt 3B",
                "city": "Madison",
                "state": "WI",
                "postal_code": "53703",
                "country": "USA",
            },
            "enrollment_date": "2021-09-01",
            "phone": "+1-608-555-0187",
        },
    ]
