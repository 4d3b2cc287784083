export default {
  bookFlight: async (call) => `FLIGHT-TO-${call.destination}`,
  bookHotel: async (call) => `HOTEL-IN-${call.destination}`,
  findPetFriendlyHotel: async (call) => `PET-HOTEL-IN-${call.destination}`,
};
