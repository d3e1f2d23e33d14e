"""Python's operators and builtins on static values, keyed by libcst node type."""

from __future__ import annotations

import builtins
import operator

import libcst as cst

from transpiler.ir.sizes import observe_arith, observe_compare, observe_range

#: builtins an interpreter may call on static values
SAFE_BUILTINS = {name: getattr(builtins, name) for name in (
    "range", "len", "int", "float", "min", "max", "tuple", "list", "dict", "zip", "enumerate",
    "abs", "round", "sum", "str", "reversed", "sorted", "bool", "any", "all", "isinstance")}
SAFE_BUILTINS["range"] = observe_range(range)  # a loop count decides structure: see ir.sizes
#: (a float and a size: the size's provenance kept, see ir.sizes)
BINOPS = {
    cst.Add: observe_arith(operator.add, "__radd__"), cst.Subtract: observe_arith(operator.sub, "__rsub__"),
    cst.Multiply: observe_arith(operator.mul, "__rmul__"), cst.Divide: observe_arith(operator.truediv, "__rtruediv__"),
    cst.FloorDivide: observe_arith(operator.floordiv, "__rfloordiv__"), cst.Modulo: operator.mod,
    cst.Power: operator.pow,
}
#: (a comparison the program makes on a size decides its structure by the number: see ir.sizes)
CMPOPS = {
    cst.Equal: observe_compare(operator.eq), cst.NotEqual: observe_compare(operator.ne),
    cst.LessThan: observe_compare(operator.lt), cst.LessThanEqual: observe_compare(operator.le),
    cst.GreaterThan: observe_compare(operator.gt), cst.GreaterThanEqual: observe_compare(operator.ge),
    cst.In: lambda a, b: a in b, cst.NotIn: lambda a, b: a not in b,
    cst.Is: operator.is_, cst.IsNot: operator.is_not,
}
#: identity and membership: they compare objects, never tensors element-wise
OBJECT_CMPOPS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)
UNARYOPS = {cst.Minus: operator.neg, cst.Plus: operator.pos, cst.Not: operator.not_}
#: ``x += y`` → the binary operator it applies
AUGMENTED = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
    cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
}
#: the spelled names of the three constants
CONSTANTS = {"True": True, "False": False, "None": None}
