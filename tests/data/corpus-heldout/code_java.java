package com.example.library;

import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Tracks book loans for a small lending library and computes late fees.
 */
public final class LoanService {

    private static final int LOAN_DAYS = 21;
    private static final long FEE_CENTS_PER_DAY = 25L;
    private static final long MAX_FEE_CENTS = 1_000L;

    private final Map<String, Book> catalogue = new HashMap<>();
    private final Map<String, Loan> activeLoans = new HashMap<>();
    private final List<Loan> history = new ArrayList<>();

    public record Book(String isbn, String title, String author) {}

    public record Loan(Book book, String memberId, LocalDate borrowedOn, LocalDate dueOn) {
        public boolean isOverdue(LocalDate today) {
            return today.isAfter(dueOn);
        }
    }

    public void addBook(Book book) {
        if (catalogue.putIfAbsent(book.isbn(), book) != null) {
            throw new IllegalArgumentException("Duplicate ISBN: " + book.isbn());
        }
    }

    public Loan borrow(String isbn, String memberId, LocalDate today) {
        Book book = Optional.ofNullable(catalogue.get(isbn))
                .orElseThrow(() -> new IllegalArgumentException("Unknown ISBN: " + isbn));
        if (activeLoans.containsKey(isbn)) {
            throw new IllegalStateException(book.title() + " is already on loan");
        }
        long overdue = activeLoans.values().stream()
                .filter(l -> l.memberId().equals(memberId) && l.isOverdue(today))
                .count();
        if (overdue > 0) {
            throw new IllegalStateException("Member " + memberId + " has " + overdue + " overdue book(s)");
        }
        Loan loan = new Loan(book, memberId, today, today.plusDays(LOAN_DAYS));
        activeLoans.put(isbn, loan);
        return loan;
    }

    /** Returns the late fee in cents, capped at {@link #MAX_FEE_CENTS}. */
    public long giveBack(String isbn, LocalDate today) {
        Loan loan = activeLoans.remove(isbn);
        if (loan == null) {
            throw new IllegalStateException("No active loan for " + isbn);
        }
        history.add(loan);
        long lateDays = Math.max(0, ChronoUnit.DAYS.between(loan.dueOn(), today));
        return Math.min(lateDays * FEE_CENTS_PER_DAY, MAX_FEE_CENTS);
    }

    public Map<String, List<String>> overdueByMember(LocalDate today) {
        return activeLoans.values().stream()
                .filter(l -> l.isOverdue(today))
                .collect(Collectors.groupingBy(
                        Loan::memberId,
                        Collectors.mapping(l -> l.book().title(), Collectors.toList())));
    }

    public static void main(String[] args) {
        LoanService service = new LoanService();
        service.addBook(new Book("978-0-00-000001-1", "The Quiet Harbour", "M. Okafor"));
        service.addBook(new Book("978-0-00-000002-8", "Notes on Rivers", "L. Brandt"));
        LocalDate start = LocalDate.of(2024, 3, 1);
        service.borrow("978-0-00-000001-1", "m-17", start);
        System.out.printf("Fee: %d cents%n", service.giveBack("978-0-00-000001-1", start.plusDays(30)));
    }
}
