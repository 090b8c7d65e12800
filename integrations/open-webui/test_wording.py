"""The words the server writes too (lib/wording.ts), pinned by the table both read.

test/fixtures/wording.json; the server's side is lib/wording-shared.test.ts.
"""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from openclaw_asks_filter import MULTI_SELECT_NOTE, prompt_fallback_text

TABLE = json.loads(
    (Path(__file__).parents[2] / "test" / "fixtures" / "wording.json").read_text("utf-8")
)


class SharedWordingTest(unittest.TestCase):
    def test_names_a_multiple_choice_as_the_server_does(self):
        self.assertEqual(MULTI_SELECT_NOTE, TABLE["formAsText"]["multiSelect"])

    def test_writes_a_form_left_in_the_reply_as_the_server_does(self):
        for case in TABLE["cases"]:
            with self.subTest(case=case["name"]):
                self.assertEqual(prompt_fallback_text(case["prompt"]), case["text"])


if __name__ == "__main__":
    unittest.main()
