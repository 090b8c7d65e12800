"""The filter's valves and their defaults, pinned by the table connect-openwebui reads too.

test/fixtures/valves.json; the server's side is server/openwebui/filter-valves.test.ts.
"""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from openclaw_asks_filter import Filter

TABLE = json.loads(
    (Path(__file__).parents[2] / "test" / "fixtures" / "valves.json").read_text("utf-8")
)


class SharedValvesTest(unittest.TestCase):
    def test_has_the_names_and_defaults_connect_openwebui_knows(self):
        self.assertEqual(Filter.Valves().model_dump(), TABLE["defaults"])


if __name__ == "__main__":
    unittest.main()
