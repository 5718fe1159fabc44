<?php
// Seed 002's students: GET /students -> the same two records on every call.
declare(strict_types=1);

namespace Callbench\Workloads;

final class Students
{
    public static function list(): array
    {
        return [
            'students' => [
                [
                    'id' => 1,
                    'firstName' => 'Emily',
                    'lastName' => 'Johnson',
                    'email' => 'emily.johnson@example.edu',
                    'age' => 20,
                    'gpa' => 3.8,
                    'enrolled' => true,
                    'major' => 'Computer Science',
                    'courses' => ['Data Structures', 'Operating Systems', 'Linear Algebra', 'Databases'],
                    'address' => [
                        'street' => '1420 Maple Avenue',
                        'city' => 'Springfield',
                        'state' => 'IL',
                        'postalCode' => '62704',
                        'country' => 'USA',
                    ],
                    'enrollmentDate' => '2023-09-01',
                    'phone' => '+1-217-555-0142',
                ],
                [
                    'id' => 2,
                    'firstName' => 'Michael',
                    'lastName' => 'Chen',
                    'email' => 'michael.chen@example.edu',
                    'age' => 22,
                    'gpa' => 3.45,
                    'enrolled' => true,
                    'major' => 'Mechanical Engineering',
                    'courses' => ['Thermodynamics', 'Fluid Mechanics', 'Materials Science', 'Calculus III'],
                    'address' => [
                        'street' => '87 Oak Street, Apt 3B',
                        'city' => 'Madison',
                        'state' => 'WI',
                        'postalCode' => '53703',
                        'country' => 'USA',
                    ],
                    'enrollmentDate' => '2021-09-01',
                    'phone' => '+1-608-555-0187',
                ],
            ],
        ];
    }
}
