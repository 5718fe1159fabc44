"""Unit tests of the shared workloads (stdlib only): python3 -m unittest discover -s servers/_python-shared/tests"""

import hashlib
import sys
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callbench_shared import auth, cars, echo, life, students  # noqa: E402
from callbench_shared.errors import ErrorKind, WorkloadError  # noqa: E402
from callbench_shared.limits import MAX_BOARD_CELLS, MAX_COORDINATE, MAX_NTIMES, MAX_PASSWORD_BYTES  # noqa: E402


def users_json() -> bytes:
    """The bytes `callbench gen-users` writes (crates/workloads/src/users.rs)."""
    lines = [f'{{"id":{i},"hash":"{hashlib.sha512(f"password-{i}".encode()).hexdigest()}"}}' for i in range(1, 10001)]
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode()


class AuthTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.path = Path(cls.dir.name) / "users.json"
        cls.path.write_bytes(users_json())

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_the_users_file_is_the_contracts(self):
        digest = hashlib.sha256(self.path.read_bytes()).hexdigest()
        self.assertEqual(digest, "f05aecc030315eb68cf1d208d42bb96f787b020f19f1fbbb9c803191401dc05c")

    def test_sha512_matches_the_fips_180_vector(self):
        self.assertEqual(
            auth.sha512_hex("abc"),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        )

    def test_both_modes_agree(self):
        for mode in auth.Mode:
            store = auth.UserStore(self.path, mode)
            self.assertEqual(store.test(9999, "abc"), auth.sha512_hex("abc"))
            for user_id in (0, 10_001, -5):
                with self.assertRaises(WorkloadError) as e:
                    store.test(user_id, "abc")
                self.assertIs(e.exception.kind, ErrorKind.NOT_FOUND)
            for password in ("", "x" * (MAX_PASSWORD_BYTES + 1), "é" * 513):
                with self.assertRaises(WorkloadError) as e:
                    store.test(1, password)
                self.assertIs(e.exception.kind, ErrorKind.INVALID_ARGUMENT)
            self.assertEqual(store.test(8, "é" * 512), auth.sha512_hex("é" * 512))  # 1024 bytes

    def test_a_missing_file_fails_at_start(self):
        with self.assertRaises(OSError):
            auth.UserStore(Path(self.dir.name) / "nope.json", auth.Mode.PER_REQUEST)


class CarsTest(unittest.TestCase):
    def seed(self):
        car = SimpleNamespace(make="toyota", model="corolla", trim="4DR Sedan", color="gray", year=2012, mileage=120000)
        driver = SimpleNamespace(firstname="John", lastname="Smith", driver_id="someId")
        return car, driver

    def test_accepts_the_seed_message(self):
        cars.validate(*self.seed())

    def test_rejects_what_the_contract_rejects(self):
        changes = [
            ("car", None),
            ("driver", None),
            ("make", ""),
            ("model", ""),
            ("year", 1885),
            ("year", 2101),
            ("mileage", 10_000_001),
            ("color", "x" * 257),
            ("driver_id", "é" * 129),
        ]
        for field, value in changes:
            car, driver = self.seed()
            if field == "car":
                car = None
            elif field == "driver":
                driver = None
            else:
                setattr(driver if field == "driver_id" else car, field, value)
            with self.subTest(field=field), self.assertRaises(WorkloadError):
                cars.validate(car, driver)


class LifeTest(unittest.TestCase):
    def test_blinker_oscillates_with_period_two(self):
        horizontal, vertical = [(0, 1), (1, 1), (2, 1)], [(1, 0), (1, 1), (1, 2)]
        self.assertEqual(life.step(horizontal, 1), vertical)
        self.assertEqual(life.step(horizontal, 2), horizontal)

    def test_glider_moves_one_cell_diagonally_every_four_generations(self):
        glider = [(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)]
        self.assertEqual(life.step(glider, 4), sorted((x + 1, y + 1) for x, y in glider))

    def test_setup_is_the_sorted_acorn(self):
        self.assertEqual(life.setup(), [(0, 2), (1, 0), (1, 2), (3, 1), (4, 2), (5, 2), (6, 2)])

    def test_duplicate_cells_count_once(self):
        self.assertEqual(life.step([(0, 1), (1, 1), (2, 1), (2, 1)], 2), [(0, 1), (1, 1), (2, 1)])

    def test_limits_are_enforced(self):
        acorn = life.setup()
        bad = [
            (acorn, 0),
            (acorn, MAX_NTIMES + 1),
            ([(MAX_COORDINATE + 1, 0)], 1),
            ([(0, -MAX_COORDINATE - 1)], 1),
            ([(i * 3, 0) for i in range(MAX_BOARD_CELLS + 1)], 1),
        ]
        for board, ntimes in bad:
            with self.assertRaises(WorkloadError):
                life.step(board, ntimes)


class EchoAndStudentsTest(unittest.TestCase):
    def record(self, score=0.5, latitude=39.78, location=True, kind=1):
        place = SimpleNamespace(city="Springfield", latitude=latitude, longitude=-89.65) if location else None
        return SimpleNamespace(score=score, location=place, kind=kind)

    def test_echo_wants_finite_numbers(self):
        echo.validate([self.record(), self.record(location=False)])
        for bad in (self.record(score=float("nan")), self.record(latitude=float("inf"))):
            with self.assertRaises(WorkloadError):
                echo.validate([self.record(), bad])

    def test_echo_wants_a_known_kind(self):
        # A protobuf record holds the number (open enum); a REST model holds the name, checked by its parser.
        echo.validate([self.record(kind=0), self.record(kind=3), self.record(kind="KIND_LARGE")])
        for kind in (4, 9, -1):
            with self.assertRaises(WorkloadError) as e:
                echo.validate([self.record(), self.record(kind=kind)])
            self.assertEqual(e.exception.message, f"records[1].kind: unknown value {kind}")

    def test_two_fresh_students_per_call(self):
        first, second = students.list_students(), students.list_students()
        self.assertEqual([s["id"] for s in first], [1, 2])
        self.assertEqual(first, second)
        self.assertIsNot(first[0], second[0])


if __name__ == "__main__":
    unittest.main()
