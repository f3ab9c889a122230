"""Arithmetic written the way people say it, read into the evaluator's own grammar.

A small model asked for an expression often copies the user's words: "17.5% of 240",
"10 factorial", "the remainder of 100 divided by 7", "7 squared plus 3 squared",
"twenty-three times four". :func:`read` parses such text with a small recursive-descent
grammar and answers a Python ``ast`` expression built only of the nodes the evaluator
allows (numbers, + - * / % **, calls of its functions), so it is checked and bounded
exactly as a typed expression is. A word it does not know is an error that names the
word and where it stands; nothing is guessed or skipped, except the filler words of a
question ("what is", "calculate", "please").

Read as calculators read: ``x% of y`` (or ``on y``: a tip, a tax) is ``x / 100 * y``;
``x%`` on its own ``x / 100``, and ``%`` between two numbers stays the remainder;
``a/b of y`` is ``a / b * y``; a prefix function ("square root of", "factorial of",
"sine of") takes the next number or parenthesised group with its postfix words
("squared", "!"); ``^``, "to the power of" and "to the 4th power" bind tighter than
"times".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_DEPTH = 40  # nested groups and prefix words: the reader and evaluator recurse
MAX_SPELLED = 10**15  # "a billion billion" is not a number anyone says

_TOKEN = re.compile(
    r"(?P<num>\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|\d+(?:\.\d+)?(?:e[-+]?\d+)?|\.\d+)"
    r"|(?P<op>\*\*|//|[-+*/%^()!,×÷−–²³√π=?])"
    r"|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)?)"
    r"|(?P<space>\s+|\.(?!\d))"
    r"|(?P<other>.)",
    re.IGNORECASE,
)
_SYMBOLS = {"×": "*", "÷": "/", "−": "-", "–": "-", "^": "**", "π": "pi"}
_FILLER = frozenset({
    "what", "what's", "whats", "is", "are", "was", "does", "do", "the", "a", "an",
    "calculate", "compute", "evaluate", "work", "out", "solve", "please", "equals",
    "equal", "how", "much", "tell", "me", "give", "find", "get", "value", "result",
    "answer", "can", "you", "i", "need", "know", "exactly", "?", "=",
})  # fmt: skip
_UNITS = {word: n for n, word in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen",
))}  # fmt: skip
_TENS = {word: 10 * (n + 2) for n, word in enumerate((
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
))}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9}
_CONSTANTS = frozenset({"pi", "e", "tau"})
#: Spoken names of the evaluator's functions; the evaluator's own names are read too.
_FUNCTION_WORDS = {
    "sine": "sin", "cosine": "cos", "tangent": "tan", "logarithm": "log",
    "maximum": "max", "minimum": "min", "absolute": "abs", "exponential": "exp",
}  # fmt: skip
_LISTS = frozenset({"gcd", "lcm", "max", "min", "hypot", "atan2"})
_PLACES = frozenset({"decimal", "decimals", "place", "places", "digit", "digits", "dp", "dps"})


class Unreadable(ValueError):
    """The text is not arithmetic this reader knows; ``position`` is where it stops."""

    def __init__(self, message: str, word: str, position: int) -> None:
        super().__init__(message)
        self.word = word
        self.position = position


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "num", "op" or "word"
    text: str
    position: int
    value: int | float = 0


def read(text: str, functions: Sequence[str]) -> ast.expr:
    """The expression ``text`` says, as an ``ast`` expression over ``functions``."""
    return _Reader(_numbers(_tokens(text)), frozenset(functions), len(text)).whole()


def _tokens(text: str) -> list[Token]:
    found: list[Token] = []
    for match in _TOKEN.finditer(text):
        kind, raw = match.lastgroup or "other", match.group()
        if kind == "space":
            continue
        if kind == "other":
            raise Unreadable(f"cannot read {raw!r} at {match.start()}", raw, match.start())
        if kind == "num":
            number = raw.replace(",", "")
            value: int | float = float(number) if re.search(r"[.eE]", number) else int(number)
            found.append(Token("num", raw, match.start(), value))
        elif kind == "op":
            found.append(Token("op", _SYMBOLS.get(raw, raw), match.start()))
        else:
            # "twenty-three" arrives as one word per part; "what's" stays one word
            found.append(Token("word", raw.lower().replace("’", "'"), match.start()))
    return [t for t in found if t.text not in _FILLER or t.kind == "num"]


def _numbers(tokens: list[Token]) -> list[Token]:
    """Runs of number words as one number ("three hundred and five" → 305), and a
    figure followed by a scale word ("2.5 million") as its product."""
    out: list[Token] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.kind == "num" and _word(tokens, index + 1) in _SCALES:
            scale = _SCALES[tokens[index + 1].text]
            out.append(Token("num", token.text, token.position, token.value * scale))
            index += 2
            continue
        if token.kind != "word" or not _starts_number(token.text):
            out.append(token)
            index += 1
            continue
        total = current = 0
        end = index
        while end < len(tokens):
            word = _word(tokens, end)
            if word in _SCALES and current == 0 and end > index:
                break  # "a billion billion" is two numbers, not one
            if word in _UNITS or word in _TENS:
                current += _UNITS.get(word, 0) + _TENS.get(word, 0)
            elif word == "hundred":
                current = max(current, 1) * 100
            elif word in _SCALES:
                total += max(current, 1) * _SCALES[word]
                current = 0
            elif (
                word == "and"
                and _word(tokens, end - 1) in _SCALES
                and _starts_number(_word(tokens, end + 1))
            ):
                pass  # "one hundred and five"
            elif word == "-" and _hyphen(tokens, end):
                pass  # "twenty-three"
            else:
                break
            if total + current > MAX_SPELLED:
                raise Unreadable("that number is too large", token.text, token.position)
            end += 1
        out.append(Token("num", token.text, token.position, total + current))
        index = end
    return out


def _word(tokens: Sequence[Token], index: int) -> str:
    if 0 <= index < len(tokens) and tokens[index].kind in ("word", "op"):
        return tokens[index].text
    return ""


def _hyphen(tokens: Sequence[Token], index: int) -> bool:
    """The '-' at ``index`` joins a tens word to a units word, with no space."""
    if not (_word(tokens, index - 1) in _TENS and _word(tokens, index + 1) in _UNITS):
        return False
    before, after = tokens[index - 1], tokens[index + 1]
    here = tokens[index].position
    return before.position + len(before.text) == here and here + 1 == after.position


def _starts_number(word: str) -> bool:
    return word in _UNITS or word in _TENS or word in _SCALES


def _binary(left: ast.expr, op: ast.operator, right: ast.expr) -> ast.expr:
    return ast.BinOp(left=left, op=op, right=right)


def _call(name: str, *args: ast.expr) -> ast.expr:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _number(value: int | float) -> ast.expr:
    return ast.Constant(value=value)


class _Reader:
    def __init__(self, tokens: list[Token], functions: frozenset[str], length: int) -> None:
        self.tokens = tokens
        self.functions = functions
        self.length = length
        self.at = 0
        self.depth = 0

    # ------------------------------------------------------------------ tokens

    def peek(self, offset: int = 0) -> Token | None:
        index = self.at + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def accept(self, *words: str) -> bool:
        """Consume ``words`` (words or operators) when the text continues with them."""
        if all(_word(self.tokens, self.at + i) == w for i, w in enumerate(words)):
            self.at += len(words)
            return True
        return False

    def fail(self, expected: str) -> Unreadable:
        token = self.peek()
        if token is None:
            return Unreadable(f"the text ends where {expected} was expected", "", self.length)
        return Unreadable(
            f"cannot read {token.text!r} at {token.position}: {expected} was expected",
            token.text,
            token.position,
        )

    def starts_operand(self, offset: int = 0) -> bool:
        token = self.peek(offset)
        if token is None:
            return False
        if token.kind == "num" or token.text in ("(", "-", "+", "√"):
            return True
        return token.kind == "word" and (
            token.text in _CONSTANTS
            or self.function(token.text) is not None
            or token.text in _PREFIXES
            or token.text in ("minus", "negative", "square", "cube", "root", "half")
        )

    def function(self, word: str) -> str | None:
        name = _FUNCTION_WORDS.get(word, word)
        return name if name in self.functions else None

    # ----------------------------------------------------------------- grammar

    def whole(self) -> ast.expr:
        if not self.tokens:
            raise self.fail("a number")
        tree = self.expr()
        if self.peek() is not None:
            raise self.fail("an operator")
        return tree

    def expr(self) -> ast.expr:
        tree = self.term()
        while True:
            if self.accept("+") or self.accept("plus") or self.accept("added", "to"):
                tree = _binary(tree, ast.Add(), self.term())
            elif self.accept("-") or self.accept("minus") or self.accept("less"):
                tree = _binary(tree, ast.Sub(), self.term())
            else:
                return tree

    def term(self) -> ast.expr:
        tree = self.unary()
        while True:
            op = self.multiplication()
            if op is None:
                return tree
            if isinstance(op, ast.Div) and self.fraction_of():
                # "3/8 of 1,200" is three eighths of 1,200, not 3 / (8 * 1,200): a
                # number's "of" binds tighter than "/" everywhere else ("1 / half of 8").
                fraction = _binary(tree, op, self.primary())
                self.accept("of")
                tree = _binary(fraction, ast.Mult(), self.unary())
                continue
            tree = _binary(tree, op, self.unary())

    def fraction_of(self) -> bool:
        """The divisor is a plain number followed by "of": a fraction of something."""
        token = self.peek()
        return token is not None and token.kind == "num" and _word(self.tokens, self.at + 1) == "of"

    def multiplication(self) -> ast.operator | None:
        if self.accept("*") or self.accept("times") or self.accept("x"):
            return ast.Mult()
        if self.accept("multiplied", "by"):
            return ast.Mult()
        if self.accept("/") or self.accept("divided", "by") or self.accept("over"):
            return ast.Div()
        if self.accept("//"):
            return ast.FloorDiv()
        if self.accept("%") or self.accept("mod") or self.accept("modulo"):
            return ast.Mod()
        return None

    def unary(self) -> ast.expr:
        if self.accept("-") or self.accept("minus") or self.accept("negative"):
            return ast.UnaryOp(op=ast.USub(), operand=self.nested(self.unary))
        if self.accept("+") or self.accept("plus") or self.accept("positive"):
            return self.nested(self.unary)
        return self.power()

    def power(self) -> ast.expr:
        base = self.postfix()
        exponent = self.ordinal_power()
        if exponent is not None:
            return _binary(base, ast.Pow(), exponent)
        for words in _POWER_WORDS:
            if self.accept(*words):
                return _binary(base, ast.Pow(), self.unary())
        return base

    def ordinal_power(self) -> ast.expr | None:
        """An exponent said as an ordinal: "to the 4th power", "raised to the fourth",
        "to the 10th" ("the" is already gone). Anything else leaves the place as it was."""
        start = self.at
        self.accept("raised")
        if self.accept("to"):
            token = self.peek()
            if token is not None and token.kind == "num" and isinstance(token.value, int) \
                    and _word(self.tokens, self.at + 1) in _ORDINAL_SUFFIXES:  # fmt: skip
                self.at += 2
                self.accept("power")
                return _number(token.value)
            if token is not None and token.text in _ORDINALS:
                self.at += 1
                self.accept("power")
                return _number(_ORDINALS[token.text])
        self.at = start
        return None

    def postfix(self) -> ast.expr:
        tree = self.primary()
        percentage = False  # "on" follows a percentage as "of" does: a tip, a tax
        while True:
            if self.accept("squared") or self.accept("²"):
                tree = _binary(tree, ast.Pow(), _number(2))
            elif self.accept("cubed") or self.accept("³"):
                tree = _binary(tree, ast.Pow(), _number(3))
            elif self.accept("!") or self.accept("factorial"):
                tree = _call("factorial", tree)
            elif self.accept("percent") or self.accept("per", "cent") or self.percent_sign():
                tree = _binary(tree, ast.Div(), _number(100))
                percentage = True
                continue
            elif self.accept("of") or (percentage and self.accept("on")):
                # "20% of 150", "half of 80", "18 percent on 62.50"
                tree = _binary(tree, ast.Mult(), self.power())
            else:
                return tree
            percentage = False

    def percent_sign(self) -> bool:
        """A '%' not followed by a number is a percentage; followed by one, a remainder."""
        if _word(self.tokens, self.at) == "%" and not self.starts_operand(1):
            self.at += 1
            return True
        return False

    def primary(self) -> ast.expr:
        return self.nested(self.atom)

    def nested(self, read: Callable[[], ast.expr]) -> ast.expr:
        """``read()`` one level deeper; too deep is an error, not a RecursionError."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail("a shallower expression")
        try:
            return read()
        finally:
            self.depth -= 1

    def atom(self) -> ast.expr:
        self.accept("of")  # "the value of …"
        token = self.peek()
        if token is None:
            raise self.fail("a number")
        if token.kind == "num":
            self.at += 1
            return _number(token.value)
        if self.accept("("):
            tree = self.expr()
            if not self.accept(")"):
                raise self.fail("')'")
            return tree
        if self.accept("√"):
            return _call("sqrt", self.operand())
        if self.accept("half"):
            return _number(0.5)
        for words, read in _PREFIX_PHRASES:
            if self.accept(*words):
                return read(self)
        word = _word(self.tokens, self.at)
        if word in _CONSTANTS:
            self.at += 1
            return ast.Name(id=word, ctx=ast.Load())
        name = self.function(word)
        if name is not None:
            self.at += 1
            return self.applied(name)
        raise self.fail("a number")

    def applied(self, name: str) -> ast.expr:
        if self.accept("("):
            args = [self.expr()]
            while self.accept(","):
                args.append(self.expr())
            if not self.accept(")"):
                raise self.fail("')'")
            return _call(name, *args)
        if name == "log" and self.accept("base"):  # "log base 2 of 64"
            base = self.atom()  # not operand(): "10 of 1000" would read as a product
            self.accept("of")
            return _call("log", self.operand(), base)
        self.accept("of")
        if name in _LISTS:
            return _call(name, *self.items())
        if name == "round":
            value = self.operand()
            if self.accept("to"):
                places = self.operand()
                while _word(self.tokens, self.at) in _PLACES:
                    self.at += 1
                return _call("round", value, places)
            return _call("round", value)
        value = self.operand()
        if name == "log" and (self.accept("base") or self.accept("to", "base")):
            return _call("log", value, self.operand())  # "log of 1000 to base 10"
        return _call(name, value)

    def operand(self) -> ast.expr:
        """What a prefix word applies to: the next number or group, its postfix words
        and sign included."""
        if self.accept("-") or self.accept("minus") or self.accept("negative"):
            return ast.UnaryOp(op=ast.USub(), operand=self.nested(self.operand))
        return self.postfix()

    def items(self, separators: tuple[str, ...] = (",", "and")) -> list[ast.expr]:
        """``a, b and c``: at least two expressions."""
        found = [self.expr()]
        while True:
            self.accept(",")
            if not any(self.accept(s) for s in separators) and not self.starts_operand():
                break
            found.append(self.expr())
        if len(found) < 2:
            raise self.fail("a second number")
        return found

    # ------------------------------------------------------------ prefix words

    def folded(self, op: ast.operator, separators: tuple[str, ...] = (",", "and")) -> ast.expr:
        items = self.items(separators)
        tree = items[0]
        for item in items[1:]:
            tree = _binary(tree, op, item)
        return tree

    def total(self) -> ast.expr:
        return self.folded(ast.Add(), (",", "and", "to"))

    def product(self) -> ast.expr:
        return self.folded(ast.Mult(), (",", "and", "by"))

    def average(self) -> ast.expr:
        items = self.items()
        tree = items[0]
        for item in items[1:]:
            tree = _binary(tree, ast.Add(), item)
        return _binary(tree, ast.Div(), _number(len(items)))

    def pair(self, op: ast.operator, *between: tuple[str, ...], swap: bool = False) -> ast.expr:
        # the first operand stops before any word that could separate the two
        first = self.unary()
        if not any(self.accept(*words) for words in between):
            raise self.fail(" or ".join(" ".join(w) for w in between))
        second = self.term()
        return _binary(second, op, first) if swap else _binary(first, op, second)

    def difference(self) -> ast.expr:
        if not self.accept("between"):
            self.accept("of")
        return self.pair(ast.Sub(), ("and",), ("minus",), ("-",))

    def quotient(self) -> ast.expr:
        return self.pair(ast.Div(), ("and",), ("by",), ("divided", "by"), ("/",), ("over",))

    def remainder(self) -> ast.expr:
        for word in ("of", "when", "after", "from"):
            self.accept(word)
        first = self.unary()
        for words in _DIVIDED:
            if self.accept(*words):
                return _binary(first, ast.Mod(), self.unary())
        raise self.fail("'divided by'")

    def subtract(self) -> ast.expr:
        return self.pair(ast.Sub(), ("from",), swap=True)

    def divide(self) -> ast.expr:
        return self.pair(ast.Div(), ("by",))

    def gcd(self) -> ast.expr:
        return self.applied("gcd")

    def lcm(self) -> ast.expr:
        return self.applied("lcm")

    def root(self) -> ast.expr:
        self.accept("of")
        return _call("sqrt", self.operand())

    def cube_root(self) -> ast.expr:
        self.accept("of")
        return _call("cbrt", self.operand())

    def square(self) -> ast.expr:
        self.accept("of")
        return _binary(self.operand(), ast.Pow(), _number(2))

    def cube(self) -> ast.expr:
        self.accept("of")
        return _binary(self.operand(), ast.Pow(), _number(3))


_POWER_WORDS: tuple[tuple[str, ...], ...] = (
    # "the" is a filler word, already gone: "to the power of" arrives as "to power of"
    ("**",), ("to", "power", "of"), ("to", "power"), ("raised", "to", "power", "of"),
    ("raised", "to"), ("power", "of"), ("power",),
)  # fmt: skip
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})
_ORDINALS = {word: n for n, word in enumerate((
    "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
), start=2)}  # fmt: skip
_DIVIDED: tuple[tuple[str, ...], ...] = (
    ("divided", "by"), ("is", "divided", "by"), ("/",), ("by",), ("and",), ("mod",), ("%",),
)  # fmt: skip
#: Longer phrases first: "square root" before "square".
_PREFIX_PHRASES: tuple[tuple[tuple[str, ...], Callable[[_Reader], ast.expr]], ...] = (
    (("square", "root"), _Reader.root), (("root",), _Reader.root),
    (("cube", "root"), _Reader.cube_root), (("square",), _Reader.square),
    (("cube",), _Reader.cube), (("sum",), _Reader.total), (("total",), _Reader.total),
    (("add", "up"), _Reader.total), (("add",), _Reader.total), (("product",), _Reader.product),
    (("multiply",), _Reader.product), (("average",), _Reader.average),
    (("mean",), _Reader.average), (("difference",), _Reader.difference),
    (("quotient",), _Reader.quotient), (("remainder",), _Reader.remainder),
    (("subtract",), _Reader.subtract), (("divide",), _Reader.divide),
    (("greatest", "common", "divisor"), _Reader.gcd),
    (("greatest", "common", "factor"), _Reader.gcd),
    (("highest", "common", "factor"), _Reader.gcd),
    (("least", "common", "multiple"), _Reader.lcm),
    (("lowest", "common", "multiple"), _Reader.lcm),
)  # fmt: skip
_PREFIXES = frozenset(words[0] for words, _ in _PREFIX_PHRASES)
