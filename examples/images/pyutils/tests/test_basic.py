import unittest

from pyutils.calc import mul
from pyutils.fizz import fizzbuzz
from pyutils.slug import slugify
from pyutils.stats import mean
from pyutils.text import shout


class TestBasic(unittest.TestCase):
    def test_mul(self):
        self.assertEqual(mul(3, 4), 12)

    def test_shout(self):
        self.assertEqual(shout("hi"), "HI!")

    def test_fizz_three(self):
        self.assertEqual(fizzbuzz(9), "Fizz")

    def test_mean_simple(self):
        self.assertEqual(mean([1, 2, 3]), 2)

    def test_slug_spaces(self):
        self.assertEqual(slugify("a b"), "a-b")


if __name__ == "__main__":
    unittest.main()
