package dev.shardroute;

/** A secondary index's name and the term a row has in it ({@link Router#indexWritePlan}). */
public record Term(String index, Key term) {}
