//! A tiny lexer for arithmetic expressions like `3 * (x + 4.5) - y / 2`.

#[derive(Clone, Debug, PartialEq)]
pub enum Token<'a> {
    Number(f64),
    Ident(&'a str),
    Op(char),
    LParen,
    RParen,
}

#[derive(Debug, PartialEq)]
pub struct LexError {
    pub offset: usize,
    pub found: char,
}

pub fn lex(src: &str) -> Result<Vec<Token<'_>>, LexError> {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        match c {
            ' ' | '\t' | '\n' => i += 1,
            '+' | '-' | '*' | '/' | '^' => {
                tokens.push(Token::Op(c));
                i += 1;
            }
            '(' => {
                tokens.push(Token::LParen);
                i += 1;
            }
            ')' => {
                tokens.push(Token::RParen);
                i += 1;
            }
            '0'..='9' | '.' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                    i += 1;
                }
                let text = &src[start..i];
                let value = text.parse::<f64>().map_err(|_| LexError { offset: start, found: c })?;
                tokens.push(Token::Number(value));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                tokens.push(Token::Ident(&src[start..i]));
            }
            _ => {
                let found = src[i..].chars().next().unwrap_or('?');
                return Err(LexError { offset: i, found });
            }
        }
    }
    Ok(tokens)
}

/// Binding power for a Pratt parser: higher binds tighter; `^` is right-associative.
pub fn binding_power(op: char) -> Option<(u8, u8)> {
    Some(match op {
        '+' | '-' => (1, 2),
        '*' | '/' => (3, 4),
        '^' => (6, 5),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_a_mixed_expression() {
        let toks = lex("3 * (x_1 + 4.5)").unwrap();
        assert_eq!(
            toks,
            vec![
                Token::Number(3.0),
                Token::Op('*'),
                Token::LParen,
                Token::Ident("x_1"),
                Token::Op('+'),
                Token::Number(4.5),
                Token::RParen,
            ]
        );
    }

    #[test]
    fn reports_the_offset_of_a_stray_character() {
        assert_eq!(lex("1 + $").unwrap_err(), LexError { offset: 4, found: '$' });
        assert_eq!(lex("2 € 3").unwrap_err().found, '€');
    }

    #[test]
    fn power_is_right_associative() {
        let (l, r) = binding_power('^').unwrap();
        assert!(l > r);
    }
}
