//! Integer expressions in rank programs: peers, message sizes, repeat counts, conditions.
//!
//! An expression is written as a string in the scenario (`to = "(rank + 1) % P"`) and may use
//! integer literals, the variables `rank` (the rank evaluating it, or its index within its
//! group in a group operation), `P` (the number of ranks), `node` (the rank's node), and the
//! counters of the enclosing `repeat` loops by the names they declare; the operators
//! `+ - * / % ^` (`/` and `%` are integer division and remainder, `^` is a power), comparisons
//! `== != < <= > >=`, `&& || !`, parentheses, and the functions `min(a, b)`, `max(a, b)`,
//! `abs(a)`, `log2(a)` (floor), `pow2(a)` (`2^a`) and `if(c, a, b)`.
//!
//! Values are 64-bit integers; a comparison is 1 or 0; a condition is true when non-zero.
//! Expressions are compiled once into postfix code ([`Expr`]) and evaluated without allocation;
//! one that uses no variable is folded to a constant. Arithmetic that overflows, divides by
//! zero or takes the log of a non-positive number is an evaluation error, reported with the
//! rank and the operation, never a wrong number.

use std::fmt;

/// A compiled expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    code: Vec<Op>,
    /// The source text, for messages.
    text: String,
    /// Its value for each rank, when it reads no loop counter (see [`Expr::tabulate`]);
    /// [`UNTABULATED`] where evaluating it fails (evaluated again, for the message).
    per_rank: Option<std::sync::Arc<[i64]>>,
}

/// The entry of a rank whose value could not be tabulated.
const UNTABULATED: i64 = i64::MIN;

/// Most entries the tables of one program may hold (8 bytes each).
pub const MAX_TABULATED: usize = 1 << 24;

/// The variables an expression may read, by slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    /// The rank (or its index within its group).
    Rank,
    /// The number of ranks (or the group's size).
    Ranks,
    /// The rank's node.
    Node,
    /// The counter of the enclosing loop at this depth (0 = outermost).
    Loop(u16),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Const(i64),
    Load(Var),
    Neg,
    Not,
    Bin(BinOp),
    Call(Func),
    /// `if(c, a, b)`: pops b, a, c.
    Select,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Func {
    Min,
    Max,
    Abs,
    Log2,
    Pow2,
}

/// What an expression is evaluated against.
#[derive(Clone, Copy, Debug)]
pub struct Env<'a> {
    /// `rank`.
    pub rank: i64,
    /// `P`.
    pub ranks: i64,
    /// `node`.
    pub node: i64,
    /// The enclosing loop counters, outermost first.
    pub loops: &'a [i64],
}

/// Why an expression could not be compiled or evaluated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ExprError(pub String);

/// Deepest evaluation stack an expression may need.
const MAX_STACK: usize = 32;

impl Expr {
    /// Compiles `text`; `loop_vars` are the names of the enclosing loop counters, outermost
    /// first.
    pub fn parse(text: &str, loop_vars: &[&str]) -> Result<Expr, ExprError> {
        let tokens = lex(text)?;
        let mut p = Parser {
            tokens: &tokens,
            pos: 0,
            code: Vec::new(),
            loop_vars,
            nesting: 0,
        };
        p.expr()?;
        if p.pos != tokens.len() {
            return Err(ExprError(format!(
                "unexpected {} after the end of the expression",
                tokens[p.pos]
            )));
        }
        let mut e = Expr {
            code: p.code,
            text: text.to_owned(),
            per_rank: None,
        };
        if e.depth() > MAX_STACK {
            return Err(ExprError(format!(
                "nested more than {MAX_STACK} levels deep"
            )));
        }
        if !e.code.iter().any(|op| matches!(op, Op::Load(_))) {
            let value = e.eval(&Env {
                rank: 0,
                ranks: 0,
                node: 0,
                loops: &[],
            })?;
            e.code = vec![Op::Const(value)];
        }
        Ok(e)
    }

    /// A constant expression.
    pub fn constant(value: i64) -> Expr {
        Expr {
            code: vec![Op::Const(value)],
            text: value.to_string(),
            per_rank: None,
        }
    }

    /// Evaluates the expression for every rank of `ranks` (on `node_of(rank)`) once, so that
    /// evaluating it later is a table look-up; only for expressions that read `rank`, `P` or
    /// `node` and no loop counter. Returns the number of entries stored.
    pub fn tabulate(&mut self, ranks: u32, node_of: impl Fn(u32) -> u32) -> usize {
        if self.as_constant().is_some() || self.uses_loops() {
            return 0;
        }
        let table: Vec<i64> = (0..ranks)
            .map(|r| {
                let env = Env {
                    rank: i64::from(r),
                    ranks: i64::from(ranks),
                    node: i64::from(node_of(r)),
                    loops: &[],
                };
                self.eval(&env)
                    .ok()
                    .filter(|&v| v != UNTABULATED)
                    .unwrap_or(UNTABULATED)
            })
            .collect();
        self.per_rank = Some(table.into());
        ranks as usize
    }

    /// The value when the expression is a constant.
    pub fn as_constant(&self) -> Option<i64> {
        match self.code[..] {
            [Op::Const(v)] => Some(v),
            _ => None,
        }
    }

    /// True when the expression reads `var`.
    pub fn uses(&self, var: Var) -> bool {
        self.code.contains(&Op::Load(var))
    }

    /// True when the expression reads a loop counter.
    pub fn uses_loops(&self) -> bool {
        self.code
            .iter()
            .any(|op| matches!(op, Op::Load(Var::Loop(_))))
    }

    /// The source text.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn depth(&self) -> usize {
        let (mut depth, mut most) = (0_i64, 0_i64);
        for op in &self.code {
            depth += match op {
                Op::Const(_) | Op::Load(_) => 1,
                Op::Neg | Op::Not => 0,
                Op::Call(Func::Min | Func::Max) | Op::Bin(_) => -1,
                Op::Call(_) => 0,
                Op::Select => -2,
            };
            most = most.max(depth);
        }
        most as usize
    }

    /// The value for `rank` when it needs no evaluation: a constant, or a tabulated value.
    #[inline(always)]
    pub fn quick(&self, rank: u32) -> Option<i64> {
        if let [Op::Const(v)] = self.code[..] {
            return Some(v);
        }
        let v = *self.per_rank.as_ref()?.get(rank as usize)?;
        (v != UNTABULATED).then_some(v)
    }

    /// Evaluates the expression.
    #[inline]
    pub fn eval(&self, env: &Env<'_>) -> Result<i64, ExprError> {
        if let [Op::Const(v)] = self.code[..] {
            return Ok(v);
        }
        if let Some(table) = &self.per_rank
            && let Some(&v) = table.get(env.rank as usize)
            && v != UNTABULATED
        {
            return Ok(v);
        }
        self.run(env)
    }

    fn run(&self, env: &Env<'_>) -> Result<i64, ExprError> {
        let mut stack = [0_i64; MAX_STACK];
        let mut top = 0;
        for op in &self.code {
            match *op {
                Op::Const(v) => {
                    stack[top] = v;
                    top += 1;
                }
                Op::Load(var) => {
                    stack[top] = match var {
                        Var::Rank => env.rank,
                        Var::Ranks => env.ranks,
                        Var::Node => env.node,
                        Var::Loop(d) => env.loops[usize::from(d)],
                    };
                    top += 1;
                }
                Op::Neg => {
                    stack[top - 1] = stack[top - 1]
                        .checked_neg()
                        .ok_or_else(|| self.fail("negation overflows"))?;
                }
                Op::Not => stack[top - 1] = i64::from(stack[top - 1] == 0),
                Op::Bin(b) => {
                    top -= 1;
                    let (a, c) = (stack[top - 1], stack[top]);
                    stack[top - 1] = self.binary(b, a, c)?;
                }
                Op::Call(f) => match f {
                    Func::Min | Func::Max => {
                        top -= 1;
                        let (a, c) = (stack[top - 1], stack[top]);
                        stack[top - 1] = if f == Func::Min { a.min(c) } else { a.max(c) };
                    }
                    Func::Abs => {
                        stack[top - 1] = stack[top - 1]
                            .checked_abs()
                            .ok_or_else(|| self.fail("abs overflows"))?;
                    }
                    Func::Log2 => {
                        let a = stack[top - 1];
                        if a <= 0 {
                            return Err(self.fail(&format!("log2 of {a}")));
                        }
                        stack[top - 1] = i64::from(63 - a.leading_zeros());
                    }
                    Func::Pow2 => {
                        let a = stack[top - 1];
                        if !(0..=62).contains(&a) {
                            return Err(self.fail(&format!("pow2 of {a}")));
                        }
                        stack[top - 1] = 1 << a;
                    }
                },
                Op::Select => {
                    top -= 2;
                    let (c, a, b) = (stack[top - 1], stack[top], stack[top + 1]);
                    stack[top - 1] = if c != 0 { a } else { b };
                }
            }
        }
        Ok(stack[0])
    }

    fn binary(&self, b: BinOp, a: i64, c: i64) -> Result<i64, ExprError> {
        let overflow = || self.fail(&format!("{a} {} {c} overflows", b.symbol()));
        Ok(match b {
            BinOp::Add => a.checked_add(c).ok_or_else(overflow)?,
            BinOp::Sub => a.checked_sub(c).ok_or_else(overflow)?,
            BinOp::Mul => a.checked_mul(c).ok_or_else(overflow)?,
            BinOp::Div | BinOp::Rem if c == 0 => {
                return Err(self.fail(&format!("{a} {} 0", b.symbol())));
            }
            BinOp::Div => a.div_euclid(c),
            BinOp::Rem => a.rem_euclid(c),
            BinOp::Pow => {
                let e = u32::try_from(c).map_err(|_| self.fail(&format!("{a} ^ {c}")))?;
                a.checked_pow(e).ok_or_else(overflow)?
            }
            BinOp::Eq => i64::from(a == c),
            BinOp::Ne => i64::from(a != c),
            BinOp::Lt => i64::from(a < c),
            BinOp::Le => i64::from(a <= c),
            BinOp::Gt => i64::from(a > c),
            BinOp::Ge => i64::from(a >= c),
            BinOp::And => i64::from(a != 0 && c != 0),
            BinOp::Or => i64::from(a != 0 || c != 0),
        })
    }

    fn fail(&self, what: &str) -> ExprError {
        ExprError(format!("`{}`: {what}", self.text))
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Pow => "^",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// Binding power: higher binds tighter.
    fn power(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne => 3,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
            BinOp::Pow => 7,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(i64),
    Ident(String),
    Sym(&'static str),
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Num(n) => write!(f, "`{n}`"),
            Token::Ident(s) => write!(f, "`{s}`"),
            Token::Sym(s) => write!(f, "`{s}`"),
        }
    }
}

fn lex(text: &str) -> Result<Vec<Token>, ExprError> {
    const SYMBOLS: [&str; 20] = [
        "==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "^", "<", ">", "!", "(", ")",
        ",", "=", "&",
    ];
    let mut tokens = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let c = rest.chars().next().expect("not empty");
        if c.is_ascii_digit() {
            let end = rest
                .find(|ch: char| !(ch.is_ascii_digit() || ch == '_'))
                .unwrap_or(rest.len());
            let digits: String = rest[..end].chars().filter(|&ch| ch != '_').collect();
            let n = digits
                .parse::<i64>()
                .map_err(|_| ExprError(format!("the number {} is too large", &rest[..end])))?;
            tokens.push(Token::Num(n));
            rest = &rest[end..];
        } else if c.is_ascii_alphabetic() || c == '_' {
            let end = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            tokens.push(Token::Ident(rest[..end].to_owned()));
            rest = &rest[end..];
        } else if let Some(sym) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            if *sym == "=" || *sym == "&" {
                return Err(ExprError(format!(
                    "`{sym}` is not an operator (did you mean `{sym}{sym}`?)"
                )));
            }
            tokens.push(Token::Sym(sym));
            rest = &rest[sym.len()..];
        } else {
            return Err(ExprError(format!("unexpected character {c:?}")));
        }
        rest = rest.trim_start();
    }
    if tokens.is_empty() {
        return Err(ExprError("the expression is empty".to_owned()));
    }
    Ok(tokens)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    code: Vec<Op>,
    loop_vars: &'a [&'a str],
    /// How deeply the parser has descended (parentheses, calls, unary operators, nested
    /// right operands): refused past [`MAX_NESTING`] before the recursion can exhaust the stack.
    nesting: usize,
}

/// How deeply an expression may nest (parentheses, function calls, signs, `^` chains): far more
/// than a readable expression needs, and far below what would exhaust the parser's stack.
pub const MAX_NESTING: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn expect(&mut self, sym: &str) -> Result<(), ExprError> {
        match self.peek() {
            Some(Token::Sym(s)) if *s == sym => {
                self.pos += 1;
                Ok(())
            }
            Some(t) => Err(ExprError(format!("expected `{sym}`, found {t}"))),
            None => Err(ExprError(format!("expected `{sym}` at the end"))),
        }
    }

    fn expr(&mut self) -> Result<(), ExprError> {
        self.binary(0)
    }

    /// Precedence climbing over binary operators binding tighter than `min`.
    fn binary(&mut self, min: u8) -> Result<(), ExprError> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(ExprError(format!(
                "nested more than {MAX_NESTING} levels deep (parentheses, calls, signs or `^`)"
            )));
        }
        let done = self.binary_within(min);
        self.nesting -= 1;
        done
    }

    fn binary_within(&mut self, min: u8) -> Result<(), ExprError> {
        self.unary()?;
        while let Some(Token::Sym(s)) = self.peek() {
            let Some(op) = bin_op(s) else { break };
            if op.power() <= min {
                break;
            }
            self.pos += 1;
            // `^` is right-associative, the others left
            let next = if op == BinOp::Pow {
                op.power() - 1
            } else {
                op.power()
            };
            self.binary(next)?;
            self.code.push(Op::Bin(op));
        }
        Ok(())
    }

    fn unary(&mut self) -> Result<(), ExprError> {
        match self.peek() {
            Some(Token::Sym("-")) => {
                self.pos += 1;
                self.binary(BinOp::Pow.power() - 1)?;
                self.code.push(Op::Neg);
                Ok(())
            }
            Some(Token::Sym("!")) => {
                self.pos += 1;
                // through `binary` at the tightest level: the same operand, counted in the nesting
                self.binary(u8::MAX)?;
                self.code.push(Op::Not);
                Ok(())
            }
            _ => self.atom(),
        }
    }

    fn atom(&mut self) -> Result<(), ExprError> {
        let Some(token) = self.peek().cloned() else {
            return Err(ExprError("the expression ends too early".to_owned()));
        };
        self.pos += 1;
        match token {
            Token::Num(n) => self.code.push(Op::Const(n)),
            Token::Sym("(") => {
                self.expr()?;
                self.expect(")")?;
            }
            Token::Ident(name) => {
                if let Some(Token::Sym("(")) = self.peek() {
                    self.pos += 1;
                    return self.call(&name);
                }
                let var = match name.as_str() {
                    "rank" => Var::Rank,
                    "P" => Var::Ranks,
                    "node" => Var::Node,
                    other => match self.loop_vars.iter().rposition(|v| *v == other) {
                        Some(d) => Var::Loop(d as u16),
                        None => {
                            let known: Vec<String> = ["rank", "P", "node"]
                                .iter()
                                .chain(self.loop_vars)
                                .map(|v| format!("`{v}`"))
                                .collect();
                            return Err(ExprError(format!(
                                "unknown variable `{other}` (known here: {})",
                                known.join(", ")
                            )));
                        }
                    },
                };
                self.code.push(Op::Load(var));
            }
            Token::Sym(s) => return Err(ExprError(format!("unexpected `{s}`"))),
        }
        Ok(())
    }

    fn call(&mut self, name: &str) -> Result<(), ExprError> {
        let (arity, op) = match name {
            "min" => (2, Op::Call(Func::Min)),
            "max" => (2, Op::Call(Func::Max)),
            "abs" => (1, Op::Call(Func::Abs)),
            "log2" => (1, Op::Call(Func::Log2)),
            "pow2" => (1, Op::Call(Func::Pow2)),
            "if" => (3, Op::Select),
            other => {
                return Err(ExprError(format!(
                    "unknown function `{other}` (known: min, max, abs, log2, pow2, if)"
                )));
            }
        };
        for k in 0..arity {
            if k > 0 {
                self.expect(",")?;
            }
            self.expr()?;
        }
        self.expect(")")?;
        self.code.push(op);
        Ok(())
    }
}

fn bin_op(s: &str) -> Option<BinOp> {
    Some(match s {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "^" => BinOp::Pow,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "&&" => BinOp::And,
        "||" => BinOp::Or,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, rank: i64, ranks: i64, loops: &[i64], names: &[&str]) -> i64 {
        Expr::parse(text, names)
            .unwrap()
            .eval(&Env {
                rank,
                ranks,
                node: rank,
                loops,
            })
            .unwrap()
    }

    #[test]
    fn arithmetic_precedence_and_associativity() {
        assert_eq!(eval("1 + 2 * 3", 0, 0, &[], &[]), 7);
        assert_eq!(eval("(1 + 2) * 3", 0, 0, &[], &[]), 9);
        assert_eq!(eval("2 ^ 3 ^ 2", 0, 0, &[], &[]), 512);
        assert_eq!(eval("-2 ^ 2", 0, 0, &[], &[]), -4);
        assert_eq!(eval("10 - 3 - 2", 0, 0, &[], &[]), 5);
        assert_eq!(eval("7 / 2 + 7 % 2", 0, 0, &[], &[]), 4);
        assert_eq!(eval("-7 % 3", 0, 0, &[], &[]), 2, "euclidean remainder");
        assert_eq!(eval("1 < 2 && 3 >= 3 || 0", 0, 0, &[], &[]), 1);
        assert_eq!(eval("!(1 == 1)", 0, 0, &[], &[]), 0);
        assert_eq!(eval("65_536", 0, 0, &[], &[]), 65536);
    }

    #[test]
    fn variables_and_functions() {
        assert_eq!(eval("(rank + 1) % P", 15, 16, &[], &[]), 0);
        assert_eq!(eval("(rank - 1 + P) % P", 0, 16, &[], &[]), 15);
        assert_eq!(eval("rank ^ pow2(s)", 5, 8, &[1], &["s"]), 25);
        assert_eq!(
            eval(
                "log2(P) + min(i, j) + max(i, j)",
                0,
                1024,
                &[3, 4],
                &["i", "j"]
            ),
            17
        );
        assert_eq!(
            eval("if(rank % 2 == 0, rank + 1, rank - 1)", 6, 8, &[], &[]),
            7
        );
        assert_eq!(eval("abs(-5) + log2(1)", 0, 0, &[], &[]), 5);
        // an inner loop variable shadows an outer one of the same name
        assert_eq!(eval("i", 0, 0, &[1, 2], &["i", "i"]), 2);
    }

    #[test]
    fn constants_fold_and_variables_do_not() {
        assert_eq!(
            Expr::parse("64 * 1024", &[]).unwrap().as_constant(),
            Some(65536)
        );
        let e = Expr::parse("rank + 1", &[]).unwrap();
        assert!(e.as_constant().is_none() && e.uses(Var::Rank) && !e.uses(Var::Ranks));
        assert!(Expr::parse("i", &["i"]).unwrap().uses_loops());
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let err = |t: &str| Expr::parse(t, &["i"]).unwrap_err().0;
        assert!(err("rank +").contains("ends too early"));
        assert!(err("rank = 1").contains("did you mean `==`"));
        assert!(err("ranks").contains("unknown variable `ranks`"));
        assert!(err("foo(1)").contains("unknown function"));
        assert!(err("(1 + 2").contains("expected `)`"));
        assert!(err("1 2").contains("unexpected `2`"));
        assert!(err("").contains("empty"));
        assert!(err("99999999999999999999").contains("too large"));
        assert!(err("1 / 0").contains("1 / 0"), "constant folding evaluates");
        let run = |t: &str| {
            Expr::parse(t, &[])
                .unwrap()
                .eval(&Env {
                    rank: 0,
                    ranks: 0,
                    node: 0,
                    loops: &[],
                })
                .unwrap_err()
                .0
        };
        assert!(run("rank % P").contains("% 0"));
        assert!(run("log2(rank)").contains("log2 of 0"));
        assert!(run("(rank + 3) ^ 100").contains("overflows"));
    }
}
