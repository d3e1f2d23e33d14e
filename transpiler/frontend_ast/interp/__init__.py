"""One interpreter of static Python for every reader (interp/core.py), its scopes, operator
tables, dispatch registries and the values the readers share."""

from transpiler.frontend_ast.interp.core import ArgumentError, DynamicIterable, Interpreter, code_of
from transpiler.frontend_ast.interp.operators import (AUGMENTED, BINOPS, CMPOPS, CONSTANTS, OBJECT_CMPOPS,
                                                      SAFE_BUILTINS, UNARYOPS)
from transpiler.frontend_ast.interp.registry import PASS, NodeRules, RuleTable, TypeTable
from transpiler.frontend_ast.interp.scope import Break, Continue, Env, Return
from transpiler.frontend_ast.interp.values import (BatchDim, ClassRef, FunctionRef, Signature, Unknown,
                                                   UnknownSplice, Unsupported, contains, source_of)

__all__ = ["AUGMENTED", "ArgumentError", "BINOPS", "BatchDim", "Break", "CMPOPS", "CONSTANTS", "ClassRef",
           "Continue", "DynamicIterable", "Env", "FunctionRef", "Interpreter", "NodeRules", "OBJECT_CMPOPS",
           "PASS", "Return", "RuleTable", "SAFE_BUILTINS", "Signature", "TypeTable", "UNARYOPS", "Unknown",
           "UnknownSplice", "Unsupported", "code_of", "contains", "source_of"]
